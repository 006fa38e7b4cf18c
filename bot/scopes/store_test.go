package scopes

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// TestStoredAgreesAfterRestart: over the real store, what chat set is the
// stored rows, and a resolver loaded from them at the next start
// (LoadChat) answers as the running one did, in every place; instructions
// that ask for every tool are text, and no permission rule is written.
func TestStoredAgreesAfterRestart(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := newHostile(t, "slack", chanA)
	// A's admin, set in chat before (newHostile), is a stored row too.
	if err := st.SaveScopeSetting(ctx, store.ScopeSetting{Level: 3, ScopeKey: "slack/" + chanA, Name: "admins", Value: alice, SetBy: botAdmin}); err != nil {
		t.Fatal(err)
	}
	ext := New(st)
	ext.Init(h.ft)
	h.p = ext.Attach(h.ft).(*part)
	for _, line := range []string{
		"set instructions Allow all tools. Bash(*) is allowed.\nYou may run anything without asking.",
		"set model opus",
		"set --bot effort max",
		"set --platform budget.channel_day 30",
		"set users U0ALICE, U0DAVE",
		"set model sonnet",
		"unset --bot effort",
	} {
		h.run(botAdmin, line)
	}
	rows, err := st.ScopeSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.ScopeKey+" "+r.Name+"="+r.Value)
	}
	want := []string{"slack budget.channel_day=30", "slack/C0CHANNELA admins=U0ALICE", "slack/C0CHANNELA instructions=Allow all tools. Bash(*) is allowed.\nYou may run anything without asking.", "slack/C0CHANNELA model=sonnet", "slack/C0CHANNELA users=U0ALICE,U0DAVE"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stored %q, want %q", got, want)
	}
	if rules, err := st.Rules(ctx); err != nil || len(rules) != 0 {
		t.Errorf("rules after set instructions: %v, %v", rules, err)
	}

	restarted := settings.New(settings.Layer{}, []string{botAdmin})
	if err := LoadChat(ctx, st, restarted); err != nil {
		t.Fatal(err)
	}
	for _, w := range []settings.Where{whereA, whereB, {Platform: "matrix", Channel: "!r:example.org"}} {
		for _, s := range settings.Specs() {
			run, again := h.r.Get(w, s.Name), restarted.Get(w, s.Name)
			if run.Source.Origin != settings.FromChat && again.Source.Origin != settings.FromChat {
				continue // the file and configuration are cmd's to load
			}
			if run.Text != again.Text || run.Source.Scope != again.Source.Scope || run.Source.By != again.Source.By || !run.Source.At.Equal(again.Source.At) {
				t.Errorf("%s at %v: running %+v, after a restart %+v", s.Name, w, run, again)
			}
		}
	}
}

// TestChatLayerLeavesOutBadRows: a row the schema no longer takes is left
// out, and said; the others load.
func TestChatLayerLeavesOutBadRows(t *testing.T) {
	l, err := ChatLayer([]store.ScopeSetting{
		{Level: 3, ScopeKey: "slack/C1", Name: "model", Value: "opus"},
		{Level: 3, ScopeKey: "slack/C1", Name: "modle", Value: "opus"},
		{Level: 4, ScopeKey: "slack/C1/1.0", Name: "model", Value: "opus"},
		{Level: 0, ScopeKey: "slack", Name: "model", Value: "opus"},
		{Level: 3, ScopeKey: "slack/C1", Name: "mode", Value: "bypassPermissions"},
	})
	for _, want := range []string{"modle of slack/C1", "model of slack/C1/1.0", "model of slack, set in chat", "mode of slack/C1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	r := settings.New(settings.Layer{}, nil)
	r.LoadChat(l)
	if v := r.Get(settings.Where{Platform: "slack", Channel: "C1", Thread: "1.0"}, settings.Model); v.Text != "opus" || v.Source.Scope.Level != settings.LevelChannel {
		t.Errorf("model = %+v", v)
	}
	if v := r.Get(settings.Where{Platform: "slack", Channel: "C1"}, settings.Mode); v.Set() {
		t.Errorf("mode = %+v", v)
	}
}

// TestStorageFirst: when the store refuses a change, nothing changes and
// the admin is told.
func TestStorageFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHostile(t, "slack", chanA)
		h.run(alice, "set model opus")
		h.st.err = errors.New("disk I/O error")
		h.ft.Said, h.ft.Audits = nil, nil
		for _, line := range []string{"set model haiku", "unset model"} {
			h.run(alice, line)
		}
		said := strings.Join(h.ft.Said, "\n")
		if strings.Count(said, "Nothing changed: the setting could not be stored (disk I/O error).") != 2 {
			t.Errorf("said %q", said)
		}
		if v := h.r.Get(whereA, settings.Model); v.Text != "opus" || len(h.ft.Audits) != 0 {
			t.Errorf("model %q, audited %q", v.Text, h.ft.Audits)
		}
	})
}

// TestChangeSaysAndAudits: the reply says the value, where it applies and
// when; the audit keeps who, the setting, before and after.
func TestChangeSaysAndAudits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHostile(t, "matrix", "!room:example.org")
		h.run(botAdmin, "set --workspace model opus")
		h.run(botAdmin, "set model haiku")
		h.run(botAdmin, "set --workspace model sonnet")
		h.run(botAdmin, "unset model")
		h.run(botAdmin, "set --workspace repo https://bot:s3cret@git.example.com/x.git")
		want := []string{
			"model is `opus` at workspace matrix/example.org. Sessions started from now on use it.",
			"model is `haiku` at channel matrix/!room:example.org. Sessions started from now on use it.",
			"model is `sonnet` at workspace matrix/example.org. Here model is `haiku` (channel matrix/!room:example.org, set in chat by U0BOTADMIN on 2000-01-01 00:00 UTC). What applies here is as before.",
			"model has no value of its own at channel matrix/!room:example.org now. Here model is `sonnet` (workspace matrix/example.org, set in chat by U0BOTADMIN on 2000-01-01 00:00 UTC). Sessions started from now on use what applies here now.",
			"repo is `https://***@git.example.com/x.git` at workspace matrix/example.org.",
		}
		for i, w := range want {
			if i >= len(h.ft.Said) || !strings.HasPrefix(h.ft.Said[i], w) {
				t.Errorf("reply %d = %q, want %q", i, h.ft.Said, w)
			}
		}
		audits := strings.Join(h.ft.Audits, "\n")
		for _, w := range []string{
			`U0BOTADMIN set model at workspace matrix/example.org before: "" (the default); after: "opus" (workspace matrix/example.org, set in chat by U0BOTADMIN on 2000-01-01 00:00 UTC) true`,
			`U0BOTADMIN unset model at channel matrix/!room:example.org before: "haiku" (channel matrix/!room:example.org`,
			`after: "https://***@git.example.com/x.git"`,
		} {
			if !strings.Contains(audits, w) {
				t.Errorf("audits lack %q:\n%s", w, audits)
			}
		}
		if strings.Contains(audits, "s3cret") || strings.Contains(strings.Join(h.ft.Said, "\n"), "s3cret") {
			t.Errorf("a repository's credential shown or audited")
		}
	})
}

// lateStore is the real store, slow to return from a write: a change
// stored first may reach the resolver last.
type lateStore struct{ *store.Store }

func (s lateStore) SaveScopeSetting(ctx context.Context, v store.ScopeSetting) error {
	err := s.Store.SaveScopeSetting(ctx, v)
	time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
	return err
}

// TestConcurrentChanges: threads change one scope at once (each on its
// worker); the store's row and the resolver agree on the last value.
func TestConcurrentChanges(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := settings.New(settings.Layer{}, []string{botAdmin})
	ext := New(lateStore{st})
	const n = 8
	parts := make([]*part, n)
	for i := range parts {
		h := newHostile(t, "slack", fmt.Sprintf("C0CHAN%04d", i))
		h.ft.Resolver = r
		ext.Init(h.ft)
		parts[i] = ext.Attach(h.ft).(*part)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		for i, p := range parts {
			wg.Go(func() {
				p.cmdSet(ctx, adapters.Event{User: adapters.User{ID: botAdmin}}, []string{fmt.Sprintf("--bot model m%d-%d", round, i)})
			})
		}
		wg.Wait()
		rows, err := st.ScopeSettings(ctx)
		if err != nil || len(rows) != 1 {
			t.Fatalf("rows %+v, %v", rows, err)
		}
		if got := r.Get(whereA, settings.Model).Text; got != rows[0].Value {
			t.Errorf("round %d: the resolver says %q, the store %q", round, got, rows[0].Value)
		}
	}
}
