package bot

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// turnTag is the thread's running turn as its log lines name it: the
// turn's record in the store (the id `status` and the database know),
// 0 while none runs or the running one has no record yet. The worker sets
// it; any goroutine logging for the thread (the CLI's reader among them)
// reads it, hence the atomic.
type turnTag struct{ id atomic.Int64 }

// set names the running turn (0: none). A nil tag (a view made without
// deps, in tests) names nothing.
func (t *turnTag) set(id int64) {
	if t != nil {
		t.id.Store(id)
	}
}

func (t *turnTag) load() int64 {
	if t == nil {
		return 0
	}
	return t.id.Load()
}

// withTurn is log whose every line carries "turn" while tag names one.
// Loggers derived from it (With) keep doing so.
func withTurn(log *slog.Logger, tag *turnTag) *slog.Logger {
	return slog.New(turnHandler{log.Handler(), tag})
}

type turnHandler struct {
	slog.Handler
	tag *turnTag
}

func (h turnHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := h.tag.load(); id != 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int64("turn", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h turnHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return turnHandler{h.Handler.WithAttrs(as), h.tag}
}

func (h turnHandler) WithGroup(name string) slog.Handler {
	return turnHandler{h.Handler.WithGroup(name), h.tag}
}
