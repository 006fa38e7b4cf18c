package matrix_test

import (
	"context"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
)

// TestNotifyMentionsOnlyTheUser: Notify's notice, as bob's client receives
// it, mentions bob (m.mentions.user_ids, the one thing that notifies on
// Matrix, and a pill), and nobody else: "@room" in the text stays inert
// and no one else is in m.mentions. An id that is no Matrix user id is
// refused, with nothing sent.
func TestNotifyMentionsOnlyTheUser(t *testing.T) {
	s := newSolo(t, soloOptions{})
	room := s.room(s.alice, false)
	s.alice.Invite(room, s.bob.Matrix.UserID)
	s.bob.Join(room)
	th := s.thread(room)
	bob := s.bob.Matrix.UserID.String()
	tests := []struct {
		name    string
		user    string
		text    string
		wantErr bool
	}{
		{"a plain notice", bob, "The scheduled run of #3 waits for your decision on prompt #1 (Bash).", false},
		{"@room in the text stays inert", bob, "Tell @room and " + s.alice.Matrix.UserID.String() + " too.", false},
		{"not a user id", "bob<script>", "hello", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, err := s.ad.Notify(context.Background(), th, adapters.User{ID: tt.user}, tt.text)
			if tt.wantErr {
				if err == nil {
					t.Errorf("Notify(%q) sent %s; want an error", tt.user, ref.ID)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := s.message(s.bob, th, ref.ID)
			mentions, _ := m.Raw["m.mentions"].(map[string]any)
			ids, _ := mentions["user_ids"].([]any)
			if len(ids) != 1 || ids[0] != bob || mentions["room"] == true {
				t.Errorf("m.mentions %v, want only %s", m.Raw["m.mentions"], bob)
			}
			if !strings.HasPrefix(m.Body, bob+": ") || !strings.HasPrefix(m.FormattedBody, `<a href="https://matrix.to/#/`) {
				t.Errorf("body %q / formatted %q: want the pill of %s first", m.Body, m.FormattedBody, bob)
			}
			if strings.Contains(m.Body, "@room") {
				t.Errorf("@room stayed live: %q", m.Body)
			}
		})
	}
}
