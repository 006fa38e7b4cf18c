// Package forge opens and updates pull requests on the team's forge and
// comments on them: the seam between the bot and a forge's API. A leaf:
// it imports nothing of this repository.
//
// Forge is the contract every forge's client keeps (Gitea's and
// Forgejo's through Gitea's Go SDK; GitHub's and GitHub Enterprise
// Server's through google/go-github): one open pull request per head
// branch, so opening again updates it; finding a branch's open pull
// request; a comment on one; the login the token is for (Self, which a
// review trigger uses to pass over the bot's own comments). Drafts differ: Gitea's is a title
// prefix an update adds or drops; GitHub's a flag set on opening that its
// REST API cannot change, so an update leaves it. The forge's token
// is the operator's configuration, read from a file (ReadToken) into a
// Token that never prints: it goes into the Authorization header of the
// forge's API requests and nowhere else — not a session's environment, a
// command line, a worktree or a log; GitHub's only to the API's own host
// (a redirect elsewhere goes without it).
//
// Files: forge.go (Forge, PR, Repo, Token); gitea.go (Gitea); github.go
// (GitHub).
package forge
