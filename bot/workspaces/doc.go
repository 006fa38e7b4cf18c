// Package workspaces is the extension (package thread) that gives the
// threads of a channel bound to a git repository a worktree each: the
// bot's side of package workspace.
//
// A channel is bound by configuration (CLAUDEOPS_REPOS) or by a bot
// admin's `repo`, which sets the channel's repo setting as `set` would
// (checked, stored through Config.Channels, applied, audited). Before a
// thread's session starts (Preparer), the thread gets a worktree on a
// branch of its own, claudeops/thread-<name> (a scheduled run's:
// claudeops/schedule-<id>-<slot>), made from the repository's
// default branch after a fetch; it becomes the session's working
// directory; as it starts (Launcher) the runner is told which parts of
// the clone the session's own git needs (workspace.Manager.SessionDirs).
// A conversation belongs to its directory: a thread whose
// worktree went makes a new one and starts a fresh conversation, and says
// so. After each turn (TurnEnder) the thread is told what the turn
// changed; a scheduled run added with --push commits and pushes its branch
// when it changed files, and its record names the branch and the commit;
// one added with --pr then opens its pull request, or, while the one an
// earlier run opened is still open on the forge, the run's worktree
// continues that pull request's branch from the remote's tip
// (workspace.Manager.Continue: the push is a fast-forward) and the pull
// request is updated; the run's thread gives its worktree up once done,
// and a reply in the pull request's newest thread continues the branch.
// Every pull request opened or updated is recorded (Config.Pulls).
// `diff`, `commit`, `push` and `pr` (Commander) work on the thread's branch;
// `pr` opens or updates the branch's pull request on the forge cmd
// configured for the repository (Config.Forges), once the branch is pushed;
// `new` (Ender) removes the worktree, keeping a branch with commits the
// remote lacks. A sweep (Sweeper) hands each thread idle past
// CLAUDEOPS_WORKTREE_TTL to its worker (Receiver), which removes the
// worktree, and with it what the CLI kept of the conversation (it cannot
// resume in another directory). A workspace call refused because the
// clone's git configuration was changed outside the bot
// (workspace.ErrTampered) is audited and told. A `push` the bot died
// during is not told as a message not run: it settles its message before
// git starts, and the next start tells the thread what the remote says.
//
// Every git call runs on content the model wrote: package workspace keeps
// that content from running anything.
//
// # Files
//
// workspaces.go: Config (CLAUDEOPS_REPOS bindings, the manager, the
// TTL), the Extension and the channel's binding; binding.go: `repo`'s
// binding, checked and saved as a setting. part.go: a thread's
// worktree made before its session, the change summary after a turn, a
// run's push, removal on `new` and by the sweep. launch.go: the parts of
// the clone a session's own git needs (Launcher), which an isolating
// runner then shows it. worktrees.go: the TTL
// sweep (with the thread's CLI home), a run's branch, the branch in
// `status`. runpr.go: a --pr schedule's pull request, the branch
// continued and handed over. pulls.go: `pr`, and every pull request
// recorded. commands.go: `repo`, `diff`, `commit`, `push`. cutpush.go: a
// push the bot died during, told at the next start (Recoverer) after the
// remote was asked.
package workspaces
