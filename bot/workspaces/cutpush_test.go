package workspaces

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/claudeops/claudeops/workspace"
)

// A push a restart cut off is handed at start to its thread, which asks
// the remote and says what it found, once. The kill -9 itself, with a
// real remote behind a slow transport: workspace's TestKilledBotPushToldAfterCheck.
func TestCutPushTold(t *testing.T) {
	const sent, other = "1111111111aaaaaaaaaa1111111111aaaaaaaaaa", "2222222222bbbbbbbbbb2222222222bbbbbbbbbb"
	tests := []struct {
		name  string
		check workspace.CutCheck
		said  string
	}{
		{"the remote has it", workspace.CutCheck{State: workspace.CutPushed, Remote: sent},
			"The bot restarted while pushing `claudeops/thread-x` (commit 1111111111): pushed (checked: origin/claudeops/thread-x is at 1111111111)."},
		{"the remote is elsewhere", workspace.CutCheck{State: workspace.CutNotPushed, Remote: other},
			"!The bot restarted while pushing `claudeops/thread-x` (commit 1111111111): not pushed (checked: origin/claudeops/thread-x is at 2222222222). `push` sends it again."},
		{"the remote has no such branch", workspace.CutCheck{State: workspace.CutNotPushed},
			"!The bot restarted while pushing `claudeops/thread-x` (commit 1111111111): not pushed (checked: the remote has no branch `claudeops/thread-x`). `push` sends it again."},
		{"the remote does not answer", workspace.CutCheck{Err: errors.New("git ls-remote: exit status 128: ssh: connect to host h: Connection refused")},
			"!The bot restarted while pushing `claudeops/thread-x` (commit 1111111111): unknown — checked: the remote did not answer (git ls-remote: exit status 128: ssh: connect to host h: Connection refused). `push` again is safe: it is never forced, and sends nothing the remote has."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeManager{check: tt.check}
			ft, p := setup(t, m)
			cut := workspace.PushCut{Worktree: workspace.Worktree{Branch: "claudeops/thread-x"}, Commit: sent, Owner: string(ft.Key.Key())}
			m.cuts = []workspace.PushCut{cut}
			p.ext.Recover(context.Background())
			posted := ft.TakeSent()
			if len(posted) != 1 {
				t.Fatalf("posted %v, want the cut push for its thread", posted)
			}
			p.Receive(context.Background(), posted[0])
			if !slices.Equal(ft.Said, []string{tt.said}) {
				t.Errorf("said %q\nwant %q", ft.Said, tt.said)
			}
			if want := []string{"check claudeops/thread-x", "forget claudeops/thread-x"}; !slices.Equal(m.calls, want) {
				t.Errorf("calls %q, want %q", m.calls, want)
			}
		})
	}
	t.Run("an owner that names no thread is not posted", func(t *testing.T) {
		m := &fakeManager{cuts: []workspace.PushCut{{Owner: "nowhere"}}}
		ft, p := setup(t, m)
		p.ext.Recover(context.Background())
		if posted := ft.TakeSent(); len(posted) != 0 {
			t.Errorf("posted %v", posted)
		}
	})
}
