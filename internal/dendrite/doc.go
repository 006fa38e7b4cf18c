// Package dendrite runs a real Matrix homeserver (Dendrite, built by
// scripts/dendrite) for tests, registers users on it, and gives tests a
// Matrix client for the humans in them (alice, mallory): it sends what
// Element sends and records everything it sees, decrypted when it can.
//
// Each Start runs its own server on a free loopback port with its data in
// t.TempDir(), so tests may run in parallel. Clients that read and write
// encrypted rooms (ClientOptions.Crypto) need -tags goolm; their sessions
// are cross-signed as Element's verified ones, or left unverified, and
// they send reactions encrypted as Element does, or anything in clear. A
// user may log in again, as a second session.
//
// Files: server.go (Server, Start, users); client.go (a human's client,
// rooms); crypto_goolm.go, crypto_nogoolm.go (encrypted clients,
// cross-signed as Element's verified sessions, with -tags goolm);
// timeline.go (what a client saw); notify.go (notifications, power
// levels); proc_linux.go, proc_other.go (the server's process attributes).
package dendrite
