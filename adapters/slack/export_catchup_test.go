package slack

// SetCatchUpPage sets the limit of each of catch-up's reads, so that a
// test makes it page.
func SetCatchUpPage(c *Config, n int) { c.catchUpPage = n }
