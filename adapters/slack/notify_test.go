package slack_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

// TestNotifyMentionsOnlyTheUser: Notify posts a notice in the thread whose
// one live mention (the fake's oracle of what Slack would ping) is the
// user's; mention syntax in the text stays inert, and an id that is not a
// Slack user id is refused with nothing posted.
func TestNotifyMentionsOnlyTheUser(t *testing.T) {
	tests := []struct {
		name    string
		user    string
		text    string
		wantErr bool
	}{
		{"a plain notice", bob, "The scheduled run of #3 waits for your decision on prompt #1 (Bash).", false},
		{"mentions in the text stay inert", bob, "Ask <!here> or @channel or <@" + alice + "> if you like.", false},
		{"an id that is no user id", "U1> <!here", "hello", true},
		{"a channel id", general, "hello", true},
	}
	s := newSolo(t)
	thread := askedThread(t, s)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(s.fs.Thread(general, thread.Thread))
			_, err := s.ad.Notify(context.Background(), thread, adapters.User{ID: tt.user}, tt.text)
			msgs := s.fs.Thread(general, thread.Thread)
			if tt.wantErr {
				if err == nil || len(msgs) != before {
					t.Errorf("err %v, %d messages posted; want an error and none", err, len(msgs)-before)
				}
				return
			}
			if err != nil || len(msgs) != before+1 {
				t.Fatalf("err %v, %d messages posted; want one", err, len(msgs)-before)
			}
			m := msgs[len(msgs)-1]
			live := m.LiveMentions()
			if len(live) == 0 || slices.ContainsFunc(live, func(l string) bool { return l != "<@"+tt.user+">" }) {
				t.Errorf("live mentions %q, want only <@%s>", live, tt.user)
			}
			if !strings.HasPrefix(m.Text, "<@"+tt.user+"> ") || !strings.Contains(m.Text, "#1") && !strings.Contains(m.Text, "Ask") {
				t.Errorf("text %q", m.Text)
			}
		})
	}
}
