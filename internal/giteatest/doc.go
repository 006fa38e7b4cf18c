// Package giteatest runs a real Gitea (built by scripts/gitea) for tests:
// a forge to push to, open pull requests on and receive webhooks from.
//
// Each Start runs its own server on a free loopback port with its
// repositories and SQLite database in a temporary directory, so tests may
// run in parallel. Gitea refuses to run as root: under root the server
// runs as a system user (claudeops-test, made with useradd when missing)
// that owns that directory; a binary that user cannot reach (a cache
// under /root) is staged once in the temporary directory (hard-linked
// where it can be), named by its size and time, and reused from there. An admin user and its API token are made at
// start; Gitea may deliver webhooks to loopback addresses.
//
// The oracles (PullRequests, Comments) read Gitea's REST API with plain
// HTTP, not with the SDK the code under test uses.
//
// Files: server.go (Start, the process, app.ini); user.go (who runs it);
// git.go (the test's own git);
// api.go (repositories, clone URLs, the oracles).
package giteatest
