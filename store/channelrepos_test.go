package store

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestChannelReposBecomeSettings: a binding an older `repo` stored in the
// channels table (`none` too) is the channel's repo setting given in chat
// after the migration, with who set it and when; the column is empty.
func TestChannelReposBecomeSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	i := slices.IndexFunc(migrations, func(m migration) bool { return m.name == "channel repos become settings" })
	s, err := open(t.Context(), path, migrations[:i])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Channel{
		{Key: "slack/C1", Repo: "/srv/git/a.git", UpdatedBy: "U1", UpdatedAt: at},
		{Key: "slack/C2", Repo: "none", UpdatedBy: "U2", UpdatedAt: at},
		{Key: "slack/C3", Cwd: "/work/c3", UpdatedBy: "U3", UpdatedAt: at},
	} {
		if err := s.SaveChannel(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err = open(t.Context(), path, migrations)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.ScopeSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []ScopeSetting{
		{Level: 3, ScopeKey: "slack/C1", Name: "repo", Value: "/srv/git/a.git", SetBy: "U1", SetAt: at},
		{Level: 3, ScopeKey: "slack/C2", Name: "repo", Value: "none", SetBy: "U2", SetAt: at},
	}
	if len(rows) != len(want) {
		t.Fatalf("settings %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i].ScopeKey != want[i].ScopeKey || rows[i].Value != want[i].Value || rows[i].SetBy != want[i].SetBy || !rows[i].SetAt.Equal(want[i].SetAt) || rows[i].Level != 3 || rows[i].Name != "repo" {
			t.Errorf("setting %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
	for _, key := range []string{"slack/C1", "slack/C2", "slack/C3"} {
		c, _, err := s.GetChannel(t.Context(), key)
		if err != nil || c.Repo != "" {
			t.Errorf("channel %s: %+v (%v), want its repo column empty", key, c, err)
		}
	}
	if c, _, _ := s.GetChannel(t.Context(), "slack/C3"); c.Cwd != "/work/c3" {
		t.Errorf("C3's cwd %q: the migration changed what it should not", c.Cwd)
	}
}
