package matrix

// Direct is the adapter's own calls, which wait on the platform, without
// the mailroom in front: a test of what one call makes of the platform
// (and of the ref it gets) uses them. The mailroom's order and coalescing
// are tested in adapters/outbox, and with the bot through the harness.
func (a *Adapter) Direct() *direct { return (*direct)(a) }

// OpenFence: whether a text would swallow a footer joined under it.
var OpenFence = openFence
