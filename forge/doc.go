// Package forge opens and updates pull requests on the team's forge and
// comments on them: the seam between the bot and a forge's API. A leaf:
// it imports nothing of this repository.
//
// Forge is the contract every forge's client keeps (Gitea's now, through
// its Go SDK; GitHub's behind the same methods later): one open pull
// request per head branch, so opening again updates it. The forge's token
// is the operator's configuration, read from a file (ReadToken) into a
// Token that never prints: it goes into the Authorization header of the
// forge's API requests and nowhere else — not a session's environment, a
// command line, a worktree or a log.
//
// Files: forge.go (Forge, PR, Repo, Token); gitea.go (Gitea).
package forge
