package workspaces

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// savedSettings is a SettingSaver that keeps what it was given.
type savedSettings struct{ rows []store.ScopeSetting }

func (s *savedSettings) SaveScopeSetting(_ context.Context, v store.ScopeSetting) error {
	s.rows = append(s.rows, v)
	return nil
}

// TestRepoIsTheSetting: `repo` and the repo setting tell one story. A bot
// admin's `repo` is the channel's repo setting (stored, applied, said with
// where it comes from); a channel admin's is refused (bot admins' only),
// and so is anyone's where the settings file manages it, saying where,
// before any git; the file's value wins over chat's and the
// configuration's, and `none` unbinds a channel the configuration binds.
func TestRepoIsTheSetting(t *testing.T) {
	channel := settings.Scope{Level: settings.LevelChannel, Key: "console/console"}
	tests := []struct {
		name  string
		file  string // the settings file's repo at the channel, at line 7
		user  string
		arg   string
		calls []string // git
		rows  int      // settings stored
		said  string   // in what is said
		repo  string   // the channel's repository afterwards
	}{
		{name: "a bot admin binds", user: "root", arg: "/srv/web.git", calls: []string{"check /srv/web.git"}, rows: 1,
			said: "This channel works on `/srv/web.git`", repo: "/srv/web.git"},
		{name: "a bot admin unbinds what the configuration binds", user: "root", arg: "none", rows: 1,
			said: "no longer bound", repo: ""},
		{name: "a channel admin may not", user: "carol", arg: "/srv/web.git",
			said: "@carol Not bound: only bot admins set repo", repo: "/srv/api.git"},
		{name: "the file manages it", file: "/srv/file.git", user: "root", arg: "/srv/web.git",
			said: "@root Not bound: repo at channel console/console is managed by the settings file, line 7: change it there.", repo: "/srv/file.git"},
		{name: "show", file: "/srv/file.git", user: "bob",
			said: "This channel works on `/srv/file.git` (channel console/console, from the settings file, line 7).", repo: "/srv/file.git"},
		{name: "show the configuration's", user: "bob",
			said: "This channel works on `/srv/api.git` (channel console/console, from the configuration (CLAUDEOPS_REPOS)).", repo: "/srv/api.git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := &fakeManager{dir: t.TempDir()}
			saved := &savedSettings{}
			var file settings.Layer
			if tt.file != "" {
				file.Put(settings.Repo, settings.Value{Text: tt.file, Source: settings.Source{Scope: channel, Origin: settings.FromFile, Line: 7}})
			}
			var config settings.Layer
			config.Put(settings.Repo, settings.Value{Text: "/srv/api.git", Source: settings.Source{Scope: channel, Origin: settings.FromConfig, Var: "CLAUDEOPS_REPOS"}})
			r := settings.New(config, []string{"root"})
			r.SetFile(file)
			w := settings.Where{Platform: "console", Channel: "console"}
			r.SetChat(w, channel, settings.Admins, "carol", "root", time.Now())
			ft := newThread(r)
			e := New(Config{Manager: m, Channels: saved, Repos: []string{"console/console=/srv/api.git"}})
			e.Init(ft)
			p := e.Attach(ft).(*part)
			ev := adapters.Event{User: adapters.User{ID: tt.user}}
			args := []string{}
			if tt.arg != "" {
				args = []string{tt.arg}
			}
			p.cmdRepo(ctx, ev, args)
			if strings.Join(m.calls, ";") != strings.Join(tt.calls, ";") {
				t.Errorf("git calls %q, want %q", m.calls, tt.calls)
			}
			if len(saved.rows) != tt.rows {
				t.Errorf("stored %+v, want %d rows", saved.rows, tt.rows)
			}
			if said := strings.Join(ft.Said, "\n"); !strings.Contains(said, tt.said) {
				t.Errorf("said %q, want %q in it", said, tt.said)
			}
			if got := e.Repo(ctx, "console/console"); got != tt.repo {
				t.Errorf("the channel's repository %q, want %q", got, tt.repo)
			}
			if v := r.Get(w, settings.Repo); tt.rows == 1 && (v.Text != tt.arg || v.Source.Origin != settings.FromChat || v.Source.By != tt.user) {
				t.Errorf("the repo setting %+v, want %q set in chat by %s", v, tt.arg, tt.user)
			}
		})
	}
}

// newThread is a fake thread "main" of console/console under r, whose
// bot admin is root.
func newThread(r *settings.Resolver) *threadtest.Thread {
	ft := threadtest.New("main", "alice")
	ft.Admins, ft.Resolver = []string{"root"}, r
	return ft
}
