package adapters

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestConnTracker: Since moves only when the state changes; an error is
// kept (one line, bounded) through a recovery until the next one.
func TestConnTracker(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tick := func() time.Time { now = now.Add(time.Second); return now }
	tr := NewConnTracker("sync", tick)
	start := tr.Status()
	if start.State != Connecting || start.Via != "sync" || start.LastError != "" {
		t.Fatalf("new: %+v", start)
	}
	steps := []struct {
		state     ConnState
		err       error
		wantSince int // seconds after the start the state began
		wantErr   string
		wantErrAt int
	}{
		{Connected, nil, 1, "", 0},
		{Connected, nil, 1, "", 0},
		{Disconnected, errors.New("dial tcp: refused\nmore detail"), 3, "dial tcp: refused …", 3},
		{Disconnected, errors.New("dial tcp: still refused"), 3, "dial tcp: still refused", 4},
		{Connected, nil, 5, "dial tcp: still refused", 4},
		{Disconnected, errors.New(strings.Repeat("x", 1000)), 6, strings.Repeat("x", maxConnError-1) + "…", 6},
	}
	for i, s := range steps {
		tr.Set(s.state, s.err)
		got := tr.Status()
		wantErrAt := time.Time{}
		if s.wantErrAt > 0 {
			wantErrAt = start.Since.Add(time.Duration(s.wantErrAt) * time.Second)
		}
		if got.State != s.state || !got.Since.Equal(start.Since.Add(time.Duration(s.wantSince)*time.Second)) ||
			got.LastError != s.wantErr || !got.LastErrorAt.Equal(wantErrAt) || tr.State() != s.state {
			t.Errorf("step %d: %+v, want %s since +%ds, error %q at +%ds", i, got, s.state, s.wantSince, s.wantErr, s.wantErrAt)
		}
	}
}
