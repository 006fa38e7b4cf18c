package store

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ms is what a stored time reads back as: UTC, truncated to the millisecond,
// and the zero time unchanged.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

var (
	berlin = time.FixedZone("CEST", 2*60*60)
	// tNs has nanoseconds and a zone, to show truncation and normalisation.
	tNs = time.Date(2026, 3, 29, 2, 30, 15, 123_456_789, berlin)
	t1  = time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	t2  = t1.Add(time.Hour)
	t3  = t1.Add(2 * time.Hour)
)

func TestTimesRoundTrip(t *testing.T) {
	s := openTest(t)
	now := time.Now()
	for _, tc := range []struct {
		name string
		in   time.Time
		want time.Time
	}{
		{"zero stays zero", time.Time{}, time.Time{}},
		{"ms precision exact", t1, t1},
		{"ns truncated, zone to UTC", tNs, time.Date(2026, 3, 29, 0, 30, 15, 123_000_000, time.UTC)},
		{"before 1970", time.Date(1969, 7, 20, 20, 17, 40, 999_000_000, time.UTC), time.Date(1969, 7, 20, 20, 17, 40, 999_000_000, time.UTC)},
		{"unix epoch is not zero", time.Unix(0, 0), time.Unix(0, 0).UTC()},
		{"monotonic reading dropped", now, time.UnixMilli(now.UnixMilli()).UTC()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.SaveChannel(t.Context(), Channel{Key: tc.name, UpdatedAt: tc.in}); err != nil {
				t.Fatal(err)
			}
			c, _, err := s.GetChannel(t.Context(), tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.UpdatedAt, tc.want) || c.UpdatedAt.Location() != time.UTC {
				t.Errorf("UpdatedAt = %v (%s), want %v UTC", c.UpdatedAt, c.UpdatedAt.Location(), tc.want)
			}
		})
	}
}

func TestRecordMessage(t *testing.T) {
	ctx := t.Context()
	type call struct {
		m     ReceivedMessage
		fresh bool
	}
	msg := func(platform, key, text string) ReceivedMessage {
		return ReceivedMessage{Platform: platform, Key: key, ThreadKey: "slack/C1/1.0", UserID: "U1", Text: text, ReceivedAt: tNs}
	}
	for _, tc := range []struct {
		name  string
		calls []call
	}{
		{"first is fresh, repeat is not", []call{
			{msg("slack", "T1/C1/1.0", "hi"), true},
			{msg("slack", "T1/C1/1.0", "hi"), false},
			{msg("slack", "T1/C1/1.0", "hi"), false},
		}},
		{"the first copy wins, whatever the second carries", []call{
			{msg("slack", "T1/C1/2.0", "from app_mention"), true},
			{msg("slack", "T1/C1/2.0", "from message"), false},
		}},
		{"same key on another platform is another message", []call{
			{msg("slack", "$ev", ""), true},
			{msg("matrix", "$ev", ""), true},
			{msg("console", "$ev", ""), true},
		}},
		{"empty key", []call{
			{msg("console", "", ""), true},
			{msg("console", "", ""), false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t)
			for i, c := range tc.calls {
				fresh, err := s.RecordMessage(ctx, c.m)
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if fresh != c.fresh {
					t.Errorf("call %d (%s/%s): fresh = %v, want %v", i, c.m.Platform, c.m.Key, fresh, c.fresh)
				}
			}
			// The stored record is the first copy's.
			first := tc.calls[0].m
			var got ReceivedMessage
			var at sql.NullInt64
			if err := s.read.QueryRowContext(ctx, `
SELECT platform, key, thread_key, user_id, text, received_at FROM received_messages WHERE platform = ? AND key = ?`,
				first.Platform, first.Key).Scan(&got.Platform, &got.Key, &got.ThreadKey, &got.UserID, &got.Text, &at); err != nil {
				t.Fatal(err)
			}
			got.ReceivedAt = timeOf(at)
			want := first
			want.ReceivedAt = ms(first.ReceivedAt)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("stored %+v, want %+v", got, want)
			}
		})
	}
}

func TestRecordMessageConcurrentExactlyOneFresh(t *testing.T) {
	s := openTest(t)
	const goroutines, messages = 8, 25
	for i := range messages {
		m := ReceivedMessage{Platform: "slack", Key: "T/C/" + strconv.Itoa(i), ReceivedAt: t1}
		var fresh atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range goroutines {
			wg.Go(func() {
				<-start
				ok, err := s.RecordMessage(t.Context(), m)
				if err != nil {
					t.Error(err)
				}
				if ok {
					fresh.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if n := fresh.Load(); n != 1 {
			t.Fatalf("message %d: %d of %d callers saw fresh, want exactly 1", i, n, goroutines)
		}
	}
}

func TestPruneMessages(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	for i, at := range []time.Time{t1, t2, t3, {}} {
		if _, err := s.RecordMessage(ctx, ReceivedMessage{Platform: "p", Key: strconv.Itoa(i), ReceivedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.PruneMessages(ctx, t3)
	if err != nil || n != 2 {
		t.Fatalf("PruneMessages = %d, %v; want 2", n, err)
	}
	for i, wantFresh := range []bool{true, true, false, false} {
		fresh, err := s.RecordMessage(ctx, ReceivedMessage{Platform: "p", Key: strconv.Itoa(i)})
		if err != nil || fresh != wantFresh {
			t.Errorf("message %d after prune: fresh=%v err=%v, want %v", i, fresh, err, wantFresh)
		}
	}
}

func TestThreads(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	full := Thread{
		Key: "slack/C1/1700000000.000100", Platform: "slack", Channel: "C1", ThreadID: "1700000000.000100",
		StartedBy: "U1", SessionID: "5f0c…", Cwd: "/srv/api", Model: "opus", Mode: "default",
		State: "running", CreatedAt: tNs, LastActivity: t2,
	}
	norm := func(th Thread) Thread {
		th.CreatedAt, th.LastActivity = ms(th.CreatedAt), ms(th.LastActivity)
		return th
	}
	for _, tc := range []struct {
		name  string
		saves []Thread
		want  Thread
	}{
		{"every field", []Thread{full}, norm(full)},
		{"zero values", []Thread{{Key: "console/console/main"}}, Thread{Key: "console/console/main"}},
		{"upsert replaces fields, keeps CreatedAt", []Thread{
			{Key: "k2", State: "idle", SessionID: "s1", CreatedAt: t1, LastActivity: t1},
			{Key: "k2", State: "closed", SessionID: "", Model: "sonnet", CreatedAt: t3, LastActivity: t3},
		}, Thread{Key: "k2", State: "closed", Model: "sonnet", CreatedAt: t1, LastActivity: t3}},
		{"CreatedAt filled in later", []Thread{
			{Key: "k3"},
			{Key: "k3", CreatedAt: t2},
		}, Thread{Key: "k3", CreatedAt: t2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, th := range tc.saves {
				if err := s.SaveThread(ctx, th); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := s.GetThread(ctx, tc.want.Key)
			if err != nil || !ok {
				t.Fatalf("GetThread: ok=%v err=%v", ok, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}

	t.Run("missing", func(t *testing.T) {
		got, ok, err := s.GetThread(ctx, "nope")
		if err != nil || ok || !reflect.DeepEqual(got, Thread{}) {
			t.Errorf("GetThread(missing) = %+v, %v, %v", got, ok, err)
		}
	})

	t.Run("list by last activity", func(t *testing.T) {
		s := openTest(t)
		for _, th := range []Thread{
			{Key: "b", LastActivity: t2},
			{Key: "never"},
			{Key: "c", LastActivity: t3},
			{Key: "a", LastActivity: t2},
			{Key: "d", LastActivity: t1},
		} {
			if err := s.SaveThread(ctx, th); err != nil {
				t.Fatal(err)
			}
		}
		ts, err := s.ListThreads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, th := range ts {
			keys = append(keys, th.Key)
		}
		if want := []string{"c", "a", "b", "d", "never"}; !reflect.DeepEqual(keys, want) {
			t.Errorf("order %v, want %v", keys, want)
		}
	})
}

func TestChannels(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	for _, tc := range []struct {
		name  string
		saves []Channel
		want  Channel
	}{
		{"every field", []Channel{{Key: "slack/C1", Cwd: "/srv/api", UpdatedBy: "U1", UpdatedAt: tNs}},
			Channel{Key: "slack/C1", Cwd: "/srv/api", UpdatedBy: "U1", UpdatedAt: ms(tNs)}},
		{"upsert", []Channel{
			{Key: "matrix/!r:x", Cwd: "/a", UpdatedBy: "@a:x", UpdatedAt: t1},
			{Key: "matrix/!r:x", Cwd: "/b", UpdatedBy: "@b:x", UpdatedAt: t2},
		}, Channel{Key: "matrix/!r:x", Cwd: "/b", UpdatedBy: "@b:x", UpdatedAt: t2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range tc.saves {
				if err := s.SaveChannel(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := s.GetChannel(ctx, tc.want.Key)
			if err != nil || !ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("GetChannel = %+v, %v, %v; want %+v", got, ok, err, tc.want)
			}
		})
	}
	if _, ok, err := s.GetChannel(ctx, "nope"); ok || err != nil {
		t.Errorf("GetChannel(missing): ok=%v err=%v", ok, err)
	}
}

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

func TestApprovals(t *testing.T) {
	ctx := t.Context()
	input := `{"command":"go test ./..."}`
	full := Approval{
		ID: "ap-1", RequestID: "req-1", ThreadKey: "th", ChannelKey: "ch", SessionID: "sess",
		Tool: "Bash", Input: input, AskedBy: "U1", Kind: "tool", State: "pending",
		PromptRef: "slack/C1/1.5", CreatedAt: tNs, ExpiresAt: t3,
	}
	norm := func(a Approval) Approval {
		a.CreatedAt, a.ExpiresAt, a.DecidedAt = ms(a.CreatedAt), ms(a.ExpiresAt), ms(a.DecidedAt)
		return a
	}
	withDigest := func(a Approval, d string) Approval { a.InputDigest = d; return a }

	t.Run("round trip", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			saves []Approval
			want  Approval
		}{
			{"digest computed", []Approval{full}, norm(withDigest(full, InputDigest(input)))},
			{"digest given is kept", []Approval{withDigest(full, "given")}, norm(withDigest(full, "given"))},
			{"question, decided", []Approval{{ID: "q-1", Kind: "question", State: "allowed", Input: "{}",
				DecidedBy: "U2", Choice: "2,3", Scope: "once", Reason: "ok", CreatedAt: t1, DecidedAt: t2}},
				Approval{ID: "q-1", Kind: "question", State: "allowed", Input: "{}", InputDigest: InputDigest("{}"),
					DecidedBy: "U2", Choice: "2,3", Scope: "once", Reason: "ok", CreatedAt: t1, DecidedAt: t2}},
			{"upsert replaces every field", []Approval{full, {ID: "ap-1", State: "expired", Input: "x"}},
				Approval{ID: "ap-1", State: "expired", Input: "x", InputDigest: InputDigest("x")}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := openTest(t)
				for _, a := range tc.saves {
					if err := s.SaveApproval(ctx, a); err != nil {
						t.Fatal(err)
					}
				}
				got, ok, err := s.GetApproval(ctx, tc.want.ID)
				if err != nil || !ok || !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got  %+v, %v, %v\nwant %+v", got, ok, err, tc.want)
				}
			})
		}
	})

	t.Run("InputDigest is sha256 hex", func(t *testing.T) {
		if got := InputDigest(""); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
			t.Errorf("InputDigest(\"\") = %s", got)
		}
	})

	t.Run("pending, oldest first", func(t *testing.T) {
		s := openTest(t)
		for _, a := range []Approval{
			{ID: "c", State: "pending", CreatedAt: t3},
			{ID: "x", State: "allowed", CreatedAt: t1},
			{ID: "b", State: "pending", CreatedAt: t1},
			{ID: "a", State: "pending", CreatedAt: t2},
			{ID: "y", State: "expired", CreatedAt: t1},
			{ID: "d", State: "pending", CreatedAt: t1},
		} {
			if err := s.SaveApproval(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		as, err := s.PendingApprovals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range as {
			ids = append(ids, a.ID)
		}
		if want := []string{"b", "d", "a", "c"}; !reflect.DeepEqual(ids, want) {
			t.Errorf("pending %v, want %v", ids, want)
		}
	})

	t.Run("decide", func(t *testing.T) {
		decision := Approval{State: "allowed", DecidedBy: "U1", Choice: "allow", Scope: "thread", Reason: "fine",
			DecidedAt: tNs, ID: "ignored", Tool: "ignored", PromptRef: "ignored"}
		decided := full
		decided.InputDigest = InputDigest(input)
		decided.State, decided.DecidedBy, decided.Choice, decided.Scope, decided.Reason, decided.DecidedAt =
			"allowed", "U1", "allow", "thread", "fine", tNs
		for _, tc := range []struct {
			name      string
			id, from  string
			wantWon   bool
			wantErr   error
			wantAfter Approval
		}{
			{"from the current state wins", "ap-1", "pending", true, nil, norm(decided)},
			{"from another state loses, changes nothing", "ap-1", "expired", false, nil, norm(withDigest(full, InputDigest(input)))},
			{"missing", "nope", "pending", false, ErrNotFound, Approval{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := openTest(t)
				if err := s.SaveApproval(ctx, full); err != nil {
					t.Fatal(err)
				}
				won, err := s.DecideApproval(ctx, tc.id, tc.from, decision)
				if won != tc.wantWon || !errors.Is(err, tc.wantErr) {
					t.Fatalf("DecideApproval = %v, %v; want %v, %v", won, err, tc.wantWon, tc.wantErr)
				}
				got, _, _ := s.GetApproval(ctx, tc.id)
				if !reflect.DeepEqual(got, tc.wantAfter) {
					t.Errorf("after: %+v\nwant   %+v", got, tc.wantAfter)
				}
			})
		}
	})

	t.Run("concurrent deciders, exactly one wins", func(t *testing.T) {
		s := openTest(t)
		const approvals = 30
		for _, deciders := range []int{2, 8} {
			for i := range approvals {
				id := fmt.Sprintf("ap-%d-%d", deciders, i)
				if err := s.SaveApproval(ctx, Approval{ID: id, State: "pending", CreatedAt: t1}); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				winners := make(chan string, deciders)
				start := make(chan struct{})
				for d := range deciders {
					who := "U" + strconv.Itoa(d)
					state := []string{"allowed", "denied"}[d%2]
					wg.Go(func() {
						<-start
						won, err := s.DecideApproval(ctx, id, "pending", Approval{State: state, DecidedBy: who, DecidedAt: t2})
						if err != nil {
							t.Error(err)
						}
						if won {
							winners <- who
						}
					})
				}
				close(start)
				wg.Wait()
				close(winners)
				var ws []string
				for w := range winners {
					ws = append(ws, w)
				}
				if len(ws) != 1 {
					t.Fatalf("%s: winners %v, want exactly one", id, ws)
				}
				got, _, err := s.GetApproval(ctx, id)
				if err != nil || got.DecidedBy != ws[0] {
					t.Errorf("%s: stored decision by %q, winner %q (%v)", id, got.DecidedBy, ws[0], err)
				}
			}
		}
	})

	t.Run("prompt ref does not undo a decision", func(t *testing.T) {
		s := openTest(t)
		if err := s.SaveApproval(ctx, Approval{ID: "p", State: "pending"}); err != nil {
			t.Fatal(err)
		}
		if won, err := s.DecideApproval(ctx, "p", "pending", Approval{State: "denied", DecidedBy: "U1"}); !won || err != nil {
			t.Fatal(won, err)
		}
		if err := s.SetApprovalPromptRef(ctx, "p", "matrix/$ev"); err != nil {
			t.Fatal(err)
		}
		got, _, _ := s.GetApproval(ctx, "p")
		if got.State != "denied" || got.DecidedBy != "U1" || got.PromptRef != "matrix/$ev" {
			t.Errorf("after SetApprovalPromptRef: %+v", got)
		}
		if err := s.SetApprovalPromptRef(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetApprovalPromptRef(missing) = %v, want ErrNotFound", err)
		}
	})
}

func TestRules(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	in := []Rule{
		{ID: 77, Scope: "global", Effect: "deny", Tool: "Bash", Pattern: "rm -rf *", CreatedBy: "admin", CreatedAt: tNs},
		{Scope: "channel", ScopeKey: "slack/C1", Effect: "allow", Tool: "Read", CreatedAt: t1},
		{Scope: "thread", ScopeKey: "slack/C1/1.0", Effect: "allow", Tool: "Edit", Pattern: "src/**"},
	}
	var want []Rule
	for _, r := range in {
		id, err := s.AddRule(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		r.ID, r.CreatedAt = id, ms(r.CreatedAt)
		want = append(want, r)
	}
	if want[0].ID == 77 {
		t.Error("AddRule used the caller's ID")
	}
	for _, tc := range []struct {
		name     string
		delete   int64
		wantOK   bool
		wantKept []Rule
	}{
		{"all, by id", 0, false, want},
		{"delete the middle", want[1].ID, true, []Rule{want[0], want[2]}},
		{"delete again", want[1].ID, false, []Rule{want[0], want[2]}},
		{"delete the last", want[2].ID, true, []Rule{want[0]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.delete != 0 {
				ok, err := s.DeleteRule(ctx, tc.delete)
				if err != nil || ok != tc.wantOK {
					t.Fatalf("DeleteRule(%d) = %v, %v; want %v", tc.delete, ok, err, tc.wantOK)
				}
			}
			got, err := s.Rules(ctx)
			if err != nil || !reflect.DeepEqual(got, tc.wantKept) {
				t.Errorf("Rules = %+v, %v\nwant %+v", got, err, tc.wantKept)
			}
		})
	}
	// A deleted rule's id is never handed out again.
	id, err := s.AddRule(ctx, Rule{Scope: "global", Effect: "allow", Tool: "Glob"})
	if err != nil || id <= want[2].ID {
		t.Errorf("AddRule after deleting the newest = %d, %v; want > %d", id, err, want[2].ID)
	}
}

func TestAudit(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	entries := []AuditEntry{
		{ID: 500, At: t1, ThreadKey: "a", UserID: "U1", Action: "decide", Target: "ap-1", Detail: "allow", Allowed: true},
		{At: t3, ThreadKey: "b", UserID: "U2", Action: "decide", Target: "ap-2", Detail: "not the starter", Allowed: false},
		{At: t2, ThreadKey: "a", UserID: "U3", Action: "command", Target: "stop"},
		{At: t2, ThreadKey: "a", UserID: "U4", Action: "command", Target: "mode plan", Allowed: true},
		{At: tNs, ThreadKey: "", UserID: "console", Action: "rules add", Allowed: true},
	}
	for _, e := range entries {
		if err := s.Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		thread string
		limit  int
		want   []string // user ids, newest first
	}{
		{"all", "", 0, []string{"console", "U2", "U4", "U3", "U1"}},
		{"all, limited", "", 2, []string{"console", "U2"}},
		{"one thread, same At by insertion", "a", -1, []string{"U4", "U3", "U1"}},
		{"one thread, limited", "a", 1, []string{"U4"}},
		{"unknown thread", "zzz", 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, err := s.AuditLog(ctx, tc.thread, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			var users []string
			for _, e := range es {
				users = append(users, e.UserID)
			}
			if !reflect.DeepEqual(users, tc.want) {
				t.Errorf("users %v, want %v", users, tc.want)
			}
		})
	}
	t.Run("round trip", func(t *testing.T) {
		es, err := s.AuditLog(ctx, "b", 0)
		if err != nil || len(es) != 1 {
			t.Fatalf("AuditLog = %v, %v", es, err)
		}
		want := entries[1]
		want.ID = es[0].ID
		if !reflect.DeepEqual(es[0], want) || want.ID == 0 {
			t.Errorf("got %+v, want %+v", es[0], want)
		}
		last, _ := s.AuditLog(ctx, "", 0)
		if e := last[len(last)-1]; e.ID == 500 || !e.Allowed || !e.At.Equal(t1) {
			t.Errorf("first entry %+v: ID must be assigned, fields kept", e)
		}
	})
}

func BenchmarkRecordMessage(b *testing.B) {
	s := openTest(b)
	ctx := b.Context()
	m := ReceivedMessage{Platform: "slack", ThreadKey: "slack/C1/1700000000.000100", UserID: "U1",
		Text: "@claudeops update the dependencies of the api repo", ReceivedAt: t1}
	i := 0 // across runs of the sub-benchmark (-count), which share s
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			m.Key = "T1/C1/" + strconv.Itoa(i)
			i++
			if fresh, err := s.RecordMessage(ctx, m); err != nil || !fresh {
				b.Fatal(fresh, err)
			}
		}
	})
	b.Run("duplicate", func(b *testing.B) {
		m.Key = "T1/C1/dup"
		if _, err := s.RecordMessage(ctx, m); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if fresh, err := s.RecordMessage(ctx, m); err != nil || fresh {
				b.Fatal(fresh, err)
			}
		}
	})
}
