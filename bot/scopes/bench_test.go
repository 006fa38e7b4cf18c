package scopes

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// BenchmarkSettings: one `settings` in a channel whose values come from
// the configuration, the settings file and chat, among 1,000 other
// channels set in chat.
func BenchmarkSettings(b *testing.B) {
	h := benchThread(b, nil)
	ev := adapters.Event{User: adapters.User{ID: mallory}}
	for b.Loop() {
		h.ft.Said = h.ft.Said[:0]
		h.p.cmdSettings(context.Background(), ev, nil)
	}
}

// BenchmarkSet: one `set model` by the channel's admin, stored in the
// real database (a file in a temp dir), applied and audited.
func BenchmarkSet(b *testing.B) {
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "claudeops.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	h := benchThread(b, st)
	ev := adapters.Event{User: adapters.User{ID: alice}}
	i := 0
	for b.Loop() {
		h.ft.Said, h.ft.Audits = h.ft.Said[:0], h.ft.Audits[:0]
		h.p.cmdSet(context.Background(), ev, []string{fmt.Sprintf("model m%d", i)})
		i++
	}
}

func benchThread(b *testing.B, st Store) *hostile {
	h := newHostile(b, "slack", chanA)
	h.run(botAdmin, "set instructions Always run the linter.\nNever touch migrations.")
	for i := range 1000 {
		other := settings.Scope{Level: settings.LevelChannel, Key: fmt.Sprintf("slack/C0OTHER%04d", i)}
		h.r.SetChat(whereA, other, settings.Instructions, "theirs", botAdmin, h.ft.Now())
	}
	if st != nil {
		ext := New(st)
		ext.Init(h.ft)
		h.p = ext.Attach(h.ft).(*part)
	}
	return h
}
