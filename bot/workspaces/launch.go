package workspaces

import (
	"context"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/workspace"
)

var _ thread.Launcher = (*part)(nil)

// BeforeLaunch shows a session working in the thread's worktree the parts
// of the clone its own git needs: a runner that isolates the session
// (sandbox, container, Pod) shows nothing else of the host. Without them
// the session still starts, with a git that finds no repository.
func (p *part) BeforeLaunch(_ context.Context, l *thread.Launch) {
	wt, ok := p.worktree()
	if !ok || l.Dir != wt.Path {
		return
	}
	dirs, err := p.ext.cfg.Manager.SessionDirs(wt)
	if err != nil {
		p.t.Log().Warn("the session's git will find no repository", "worktree", wt.Path, "err", err)
		return
	}
	l.Mounts = append(l.Mounts, mounts(dirs)...)
	// The session's own commits need an identity: an isolated runner's
	// home has no git config, and the clone's is the bot's, unwritable.
	// The bot's own, unless the operator passes one (CLAUDEOPS_CLAUDE_ENV).
	a := p.ext.cfg.Manager.Author()
	l.Env = append(l.Env, "GIT_AUTHOR_NAME="+a.Name, "GIT_AUTHOR_EMAIL="+a.Email,
		"GIT_COMMITTER_NAME="+a.Name, "GIT_COMMITTER_EMAIL="+a.Email)
}

// mounts are the session directories as the runner takes them.
func mounts(dirs []workspace.SessionDir) []claudeproc.Mount {
	access := map[workspace.DirAccess]claudeproc.Access{
		workspace.Readable: claudeproc.ReadOnly,
		workspace.Writable: claudeproc.ReadWrite,
		workspace.Hidden:   claudeproc.Empty,
		workspace.Scratch:  claudeproc.Scratch,
	}
	out := make([]claudeproc.Mount, 0, len(dirs))
	for _, d := range dirs {
		a, ok := access[d.Access]
		if !ok {
			a = claudeproc.Empty // an access this side does not know shows nothing
		}
		out = append(out, claudeproc.Mount{Path: d.Path, Access: a})
	}
	return out
}
