// Package workspace keeps git workspaces for the bot: one bare clone per
// repository under the workspaces directory (repos/<name>-<hash>), and a
// worktree per thread or scheduled run (trees/<name>-<hash>/<branch name>)
// on a branch of its own, "claudeops/<name>", started from the remote's
// default branch after a fetch. It runs the real git binary, never a shell,
// and imports nothing of this repository.
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
//     credential helpers and every transport but file, http(s), ssh and git;
//     diffs run without external drivers or textconv. Filters and diff
//     drivers named by a .gitattributes have no definition to run.
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
// What is trusted: the clones' config files under repos/ (hooks, an
// fsmonitor or a hooks path set there are disabled all the same, but a
// filter defined there would run: a session must not write there) and the
// operator's environment variables that are passed on.
package workspace
