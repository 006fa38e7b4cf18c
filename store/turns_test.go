package store

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

func TestTurns(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	start := Turn{ID: 999, ThreadKey: "th", ChannelKey: "ch", Prompt: "update deps", StartedAt: tNs}
	id, err := s.StartTurn(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	if id == 999 || id <= 0 {
		t.Errorf("StartTurn id = %d: the caller's ID must be ignored", id)
	}
	got, ok, err := s.GetTurn(ctx, id)
	want := Turn{ID: id, ThreadKey: "th", ChannelKey: "ch", Prompt: "update deps", StartedAt: ms(tNs)}
	if err != nil || !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("after start: %+v, %v, %v\nwant %+v", got, ok, err, want)
	}

	for _, tc := range []struct {
		name   string
		finish Turn
		want   Turn
	}{
		{"result fields and the new session id",
			Turn{ID: id, SessionID: "sess-1", EndedAt: t2, ResultSubtype: "success", CostUSD: 0.125,
				InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheCreationTokens: 40, DurationMS: 1500, NumTurns: 3,
				ThreadKey: "ignored", Prompt: "ignored"},
			Turn{ID: id, ThreadKey: "th", ChannelKey: "ch", SessionID: "sess-1", Prompt: "update deps", StartedAt: ms(tNs),
				EndedAt: t2, ResultSubtype: "success", CostUSD: 0.125,
				InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheCreationTokens: 40, DurationMS: 1500, NumTurns: 3}},
		{"again, with an error and no session id keeps the session",
			Turn{ID: id, EndedAt: t3, ResultSubtype: "error_max_turns", IsError: true, CostUSD: math.Pi, NumTurns: 1},
			Turn{ID: id, ThreadKey: "th", ChannelKey: "ch", SessionID: "sess-1", Prompt: "update deps", StartedAt: ms(tNs),
				EndedAt: t3, ResultSubtype: "error_max_turns", IsError: true, CostUSD: math.Pi, NumTurns: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.FinishTurn(ctx, tc.finish); err != nil {
				t.Fatal(err)
			}
			got, _, err := s.GetTurn(ctx, id)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}

	if err := s.FinishTurn(ctx, Turn{ID: id + 100}); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishTurn(missing) = %v, want ErrNotFound", err)
	}
	if _, ok, err := s.GetTurn(ctx, id+100); ok || err != nil {
		t.Errorf("GetTurn(missing): ok=%v err=%v", ok, err)
	}
}

func TestUsage(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	type turn struct {
		thread, channel string
		start, end      time.Time // end zero: still running
		cost            float64
		in, out, dur    int64
	}
	for _, tr := range []turn{
		{"t1", "c1", day.Add(-2 * time.Hour), day.Add(-time.Hour), 1.0, 100, 10, 1000},            // yesterday
		{"t1", "c1", day.Add(-time.Minute), day.Add(time.Minute), 0.5, 50, 5, 120_000},            // spans midnight
		{"t1", "c1", day.Add(time.Hour), day.Add(time.Hour + time.Second), 0.25, 25, 2, 1000},     // today
		{"t1", "c1", day.Add(2 * time.Hour), time.Time{}, 9, 900, 90, 9000},                       // running
		{"t2", "c1", day.Add(3 * time.Hour), day.Add(3*time.Hour + time.Millisecond), 2, 1, 1, 1}, // other thread
		{"t3", "c2", day.Add(time.Hour), day.Add(2 * time.Hour), 4, 4, 4, 4},                      // other channel
	} {
		id, err := s.StartTurn(ctx, Turn{ThreadKey: tr.thread, ChannelKey: tr.channel, StartedAt: tr.start})
		if err != nil {
			t.Fatal(err)
		}
		if tr.end.IsZero() {
			// A running turn may already carry partial figures; they don't count.
			if err := s.FinishTurn(ctx, Turn{ID: id, CostUSD: tr.cost, InputTokens: tr.in}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := s.FinishTurn(ctx, Turn{ID: id, EndedAt: tr.end, CostUSD: tr.cost, InputTokens: tr.in,
			OutputTokens: tr.out, DurationMS: tr.dur}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		get  func() (Usage, error)
		want Usage
	}{
		{"thread t1, finished turns only", func() (Usage, error) { return s.ThreadUsage(ctx, "t1") },
			Usage{Turns: 3, CostUSD: 1.75, InputTokens: 175, OutputTokens: 17, DurationMS: 122_000}},
		{"thread t2", func() (Usage, error) { return s.ThreadUsage(ctx, "t2") },
			Usage{Turns: 1, CostUSD: 2, InputTokens: 1, OutputTokens: 1, DurationMS: 1}},
		{"unknown thread", func() (Usage, error) { return s.ThreadUsage(ctx, "nope") }, Usage{}},
		{"channel c1 today, by end time", func() (Usage, error) { return s.ChannelUsageSince(ctx, "c1", day) },
			Usage{Turns: 3, CostUSD: 2.75, InputTokens: 76, OutputTokens: 8, DurationMS: 121_001}},
		{"channel c1 since zero is all", func() (Usage, error) { return s.ChannelUsageSince(ctx, "c1", time.Time{}) },
			Usage{Turns: 4, CostUSD: 3.75, InputTokens: 176, OutputTokens: 18, DurationMS: 122_001}},
		{"since is inclusive", func() (Usage, error) {
			return s.ChannelUsageSince(ctx, "c1", day.Add(3*time.Hour+time.Millisecond))
		}, Usage{Turns: 1, CostUSD: 2, InputTokens: 1, OutputTokens: 1, DurationMS: 1}},
		{"channel c2, zone of since irrelevant", func() (Usage, error) { return s.ChannelUsageSince(ctx, "c2", day.In(berlin)) },
			Usage{Turns: 1, CostUSD: 4, InputTokens: 4, OutputTokens: 4, DurationMS: 4}},
		{"unknown channel", func() (Usage, error) { return s.ChannelUsageSince(ctx, "nope", day) }, Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.get()
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
