package store

import (
	"testing"
	"time"
)

// ThreadTurns lists one thread's turns in the order they started, running
// ones included, and no other thread's.
func TestThreadTurns(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	add := func(thread string, cost float64, ended bool) int64 {
		id, err := s.StartTurn(ctx, Turn{ThreadKey: thread, ChannelKey: "ch", StartedAt: base})
		if err != nil {
			t.Fatal(err)
		}
		if ended {
			if err := s.FinishTurn(ctx, Turn{ID: id, ThreadKey: thread, EndedAt: base.Add(time.Second), ResultSubtype: "success", CostUSD: cost}); err != nil {
				t.Fatal(err)
			}
		}
		return id
	}
	a1 := add("a", 0.5, true)
	add("b", 1, true)
	a2 := add("a", 0.25, false)

	tests := []struct {
		thread string
		ids    []int64
		costs  []float64
	}{
		{"a", []int64{a1, a2}, []float64{0.5, 0}},
		{"nobody", nil, nil},
	}
	for _, tt := range tests {
		got, err := s.ThreadTurns(ctx, tt.thread)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tt.ids) {
			t.Fatalf("thread %s: %d turns, want %d: %+v", tt.thread, len(got), len(tt.ids), got)
		}
		for i, tu := range got {
			if tu.ID != tt.ids[i] || tu.CostUSD != tt.costs[i] || tu.ThreadKey != tt.thread {
				t.Errorf("thread %s turn %d: %+v, want id %d cost %v", tt.thread, i, tu, tt.ids[i], tt.costs[i])
			}
		}
		if len(got) == 2 && (got[0].EndedAt.IsZero() || !got[1].EndedAt.IsZero()) {
			t.Errorf("ended times: %v, %v", got[0].EndedAt, got[1].EndedAt)
		}
	}
}
