package store

import (
	"database/sql"
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

// A message recorded is unsettled until settled; a duplicate delivery
// does not unsettle it again; unknown keys are ignored.
func TestUnsettledMessages(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	for _, m := range []ReceivedMessage{
		{Platform: "slack", Key: "T/C/2", ThreadKey: "slack/C/1", UserID: "U1", Text: "second", ReceivedAt: t2},
		{Platform: "slack", Key: "T/C/1", ThreadKey: "slack/C/1", UserID: "U1", Text: "first", ReceivedAt: t1},
		{Platform: "matrix", Key: "$ev", ThreadKey: "matrix/!r/$root", UserID: "@a:x", Text: "hi", ReceivedAt: t3},
	} {
		if _, err := s.RecordMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	keys := func() (out []string) {
		ms, err := s.UnsettledMessages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out = append(out, m.Platform+" "+m.Key+" "+m.Text)
		}
		return out
	}
	if got, want := keys(), []string{"matrix $ev hi", "slack T/C/1 first", "slack T/C/2 second"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("unsettled = %q, want %q", got, want)
	}
	for _, k := range [][2]string{{"slack", "T/C/1"}, {"matrix", "$ev"}, {"slack", "nope"}, {"matrix", "T/C/2"}} {
		if err := s.SettleMessage(ctx, k[0], k[1]); err != nil {
			t.Fatal(err)
		}
	}
	if fresh, err := s.RecordMessage(ctx, ReceivedMessage{Platform: "slack", Key: "T/C/1"}); err != nil || fresh {
		t.Fatalf("redelivery: fresh=%v err=%v", fresh, err)
	}
	if got, want := keys(), []string{"slack T/C/2 second"}; !reflect.DeepEqual(got, want) {
		t.Errorf("unsettled after settling = %q, want %q", got, want)
	}
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
