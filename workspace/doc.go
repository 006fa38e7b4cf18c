// Package workspace keeps git workspaces for the bot: one bare clone per
// repository under the workspaces directory (repos/<name>-<hash>), and a
// worktree per thread or scheduled run (trees/<name>-<hash>/<branch name>)
// on a branch of its own, "claudeops/<name>", started from the remote's
// default branch after a fetch. It runs the real git binary, never a shell,
// and imports nothing of this repository but internal/proc. Untracked
// files matching Options.Exclude (by default attachments/, where the bot
// saves what people attach) are never staged: they reach a commit only
// when someone tracks them on purpose.
//
// Trust. A worktree's content is written by the model and everything
// fetched comes from the remote: both are untrusted, while git runs on the
// host, perhaps outside the session's sandbox. So no git call reads
// anything they control as configuration or code:
//
//   - git is always told its repository (--git-dir: our clone) and work
//     tree; the worktree's ".git" file, which the model can point at a
//     directory of its own making with hooks and an fsmonitor, is never read.
//   - The environment is built, not inherited (PATH, ssh agent, proxies, CAs):
//     no system or global config, an empty HOME, no terminal prompts.
//   - Command-line configuration, which outranks every file and reaches the
//     git processes git starts, turns off hooks, fsmonitor, the pager,
//     credential helpers, askpass and every transport but file, http(s),
//     ssh and git;
//     diffs run without external drivers or textconv. Filters and diff
//     drivers named by a .gitattributes have no definition to run.
//   - The clone's configuration is the bot's alone, in every runner. A
//     worktree's ".git" file leads a session's own git to the clone, so an
//     approved "git config" there (under the local runner, as the bot's
//     user) would write the config the bot's git reads next: a filter,
//     an uploadpack or receivepack, a push redirected by pushurl or
//     insteadOf, an include. So the clone keeps config.lock, a directory,
//     which git's lockfile protocol can never take: every git that would
//     write the config fails ("could not lock config file …: File
//     exists"), while reading it, and status, diff, log, add, commit and
//     branch, work as before. And before and after every git call of
//     ours the config is compared byte for byte with the one the bot
//     wrote (there is no include, so no other file), and a commondir or
//     config.worktree beside it (which would move or add configuration)
//     is refused, and so is a link where git would follow it (packed-refs,
//     refs/, logs/, objects/: links.go): the call fails with ErrTampered,
//     the clone is restored,
//     the error names what was found. So a file written over by hand is
//     caught as well, unless it is written and put back in the instant
//     between the check and git's reading (a deliberate race that only a
//     process of the bot's own user can run, which under the local runner
//     could as well change the bot itself; a link in refs/ or objects/,
//     which an isolated session can write, it could race to plant too:
//     git would then write a ref or an object where the link leads).
//     Why not a repository per worktree, whose config the bot never
//     reads: the bot would then have to take the session's commits and
//     index from a repository the session controls, through upload-pack
//     (its configuration read too) and a second set of refs to keep in
//     step, and the session's commit would no longer be the branch the
//     bot pushes; the lock keeps one repository and one branch.
//   - In a runner that shows a session only what it is given (a sandbox,
//     a container, a Pod), the session sees of the clone what
//     SessionDirs lists: the config, config.lock, hooks and the other
//     worktrees' directories are out of its reach, not merely locked.
//   - Staging uses plumbing (diff-files, ls-files, update-index) instead of
//     "git add", which would run a git in each nested repository, under
//     that repository's own configuration.
//   - Repository arguments are refused before git sees them when they start
//     with "-", name a transport helper ("ext::…") or are relative. An
//     http(s) URL's credential never reaches a command line or the clone's
//     config: it goes, in the environment, as an Authorization header; it
//     is redacted from every error and log line.
//   - Names become ref components and directory names of [a-z0-9_-] only;
//     a Worktree handed back is checked against the workspaces directory.
//   - Push sends exactly refs/heads/<branch>:refs/heads/<branch>, never
//     forced, no tags.
//
// What is trusted: the operator's environment variables that are passed
// on, and what the bot itself wrote into the clones under repos/. Data a
// session can reach there beside the config (refs, objects/info/alternates,
// info/attributes and info/exclude) is read as data: it may change what a
// diff shows or a commit holds, never what runs.
//
// Supervision. No git outlives the bot, however it dies (internal/proc):
// a call that starts processes of its own (fetch, ls-remote, push,
// worktree add) is stopped at the bot's death and killed with its whole
// tree by a keeper, as the local runner's CLI is; plumbing, which starts
// none, is killed by the kernel. A temporary directory (a clone being
// made, an index copy) is held by its maker's flock: New removes those of
// a dead run, whatever their age, and never a live one's. A push records
// what it sends while git runs (pushes/): a record whose lock is free is a
// push cut off by the bot's death, which CheckCut settles by asking the
// remote (ls-remote), since only the remote can say whether it happened.
// A ref lock a killed git left under a clone's refs/remotes/ is removed
// before the next fetch, never while a git of any bot reaches the remote
// from that clone (a shared flock in locks/).
//
// # Files
//
// workspace.go: Options, Manager, Worktree and the stats of a change.
// repo.go: repository arguments checked and redacted, one clone per
// repository, fetch. tree.go: a worktree and its branch made, checked and
// removed (a branch with unpushed work kept). continue.go: a worktree
// continuing a bot's branch the remote has, at the remote's tip (its push
// a fast-forward; ErrBusy while another holds it). changes.go: snapshots, what
// a turn changed, the whole diff, staging by plumbing. commit.go: commit,
// push (that branch only, never forced), unpushed counts. config.go: the
// clone's config sealed (config.lock), compared before and after each
// call, restored (ErrTampered). git.go: every git call (its environment
// and the configuration that turns off what could run). names.go: names
// made safe refs and directories. disk.go: disk use. session.go: what of
// a clone a session in one of its worktrees must be shown for its own git
// to work (SessionDirs): the clone read-only, objects and refs and its own
// administrative directory writable, logs a scratch directory of its own,
// hooks and the other worktrees' directories hidden; runners that isolate
// a session show it that, and so nothing a session's git does reaches the
// config the bot's git reads. links.go: links where the bot's git would
// follow them, refused with the config check. tmp.go: temporary
// directories held by their maker, a dead run's removed at start.
// pushcut.go: a push recorded while it runs, a cut one found (CutPushes)
// and checked against the remote (CheckCut). reflocks.go: ref locks a
// dead git left in a clone, removed before a fetch.
package workspace
