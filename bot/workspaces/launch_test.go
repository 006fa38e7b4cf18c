package workspaces

import (
	"context"
	"slices"
	"testing"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
)

// TestBeforeLaunch: a session in the thread's worktree is shown the
// clone's directories its git needs, as the manager says; one elsewhere
// (a thread without a worktree, or working in another directory) nothing.
// Its git commits as the bot does.
func TestBeforeLaunch(t *testing.T) {
	want := []claudeproc.Mount{{Path: "/w/repos/r", Access: claudeproc.ReadOnly},
		{Path: "/w/repos/r/refs", Access: claudeproc.ReadWrite}, {Path: "/w/repos/r/hooks", Access: claudeproc.Empty}}
	tests := []struct {
		name     string
		worktree bool
		dir      string // "": the worktree's
		want     []claudeproc.Mount
		env      []string
	}{
		{name: "the worktree's session", worktree: true, want: want, env: []string{
			"GIT_AUTHOR_NAME=Bot", "GIT_AUTHOR_EMAIL=bot@example.invalid",
			"GIT_COMMITTER_NAME=Bot", "GIT_COMMITTER_EMAIL=bot@example.invalid"}},
		{name: "no worktree", worktree: false, dir: "/srv/work"},
		{name: "another directory", worktree: true, dir: "/srv/work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{}
			ft, p := setup(t, m)
			if tt.worktree {
				ft.Rec.Worktree, ft.Rec.Branch = m.dir, "b"
			}
			l := thread.Launch{Dir: tt.dir}
			if l.Dir == "" {
				l.Dir = m.dir
			}
			p.BeforeLaunch(context.Background(), &l)
			if !slices.Equal(l.Mounts, tt.want) {
				t.Errorf("mounts %v, want %v", l.Mounts, tt.want)
			}
			if !slices.Equal(l.Env, tt.env) {
				t.Errorf("env %v, want %v", l.Env, tt.env)
			}
		})
	}
}
