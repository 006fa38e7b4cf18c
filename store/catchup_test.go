package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestThreadsActiveSince(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	for _, th := range []Thread{
		{Key: "slack/C1/1.000001", Platform: "slack", Channel: "C1", ThreadID: "1.000001", LastActivity: t1},
		{Key: "slack/C1/2.000001", Platform: "slack", Channel: "C1", ThreadID: "2.000001", LastActivity: t3},
		{Key: "slack/C2/3.000001", Platform: "slack", Channel: "C2", ThreadID: "3.000001", LastActivity: t2},
		{Key: "matrix/!r:x/$e", Platform: "matrix", Channel: "!r:x", ThreadID: "$e", LastActivity: t3},
	} {
		if err := s.SaveThread(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		since time.Time
		want  []string
	}{
		{t2, []string{"slack/C1/2.000001", "slack/C2/3.000001"}}, // at since counts; most recent first
		{t2.Add(time.Millisecond), []string{"slack/C1/2.000001"}},
		{t1.Add(-time.Hour), []string{"slack/C1/2.000001", "slack/C2/3.000001", "slack/C1/1.000001"}},
		{t3.Add(time.Hour), nil},
	}
	for _, c := range cases {
		ts, err := s.ThreadsActiveSince(ctx, "slack", c.since)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, th := range ts {
			got = append(got, th.Key)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("since %s: %v, want %v", c.since, got, c.want)
		}
	}
}

func TestReceivedBetween(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	keys := []string{
		"T1/C1/1700000000.000001", "T1/C1/1700000005.000001", "T1/C1/slash-123",
		"T1/C10/1700000003.000001", // another channel whose id extends C1
		"T1/C2/1700000004.000001",
	}
	for _, k := range keys {
		if _, err := s.RecordMessage(ctx, ReceivedMessage{Platform: "slack", Key: k, ThreadKey: "slack/x/y", ReceivedAt: t1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RecordMessage(ctx, ReceivedMessage{Platform: "matrix", Key: "T1/C1/1700000006.000001"}); err != nil {
		t.Fatal(err)
	}
	ms, err := s.ReceivedBetween(ctx, "slack", "T1/C1/1700000000.000001", "T1/C10")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Key)
		if m.ThreadKey != "slack/x/y" || !m.ReceivedAt.Equal(t1) {
			t.Errorf("record %+v", m)
		}
	}
	// After from (exclusive), before to; the slash id sorts after the ts.
	if want := []string{"T1/C1/1700000005.000001", "T1/C1/slash-123"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The end of a channel's ids: '0' follows '/', so C10's are not in.
	ms, _ = s.ReceivedBetween(ctx, "slack", "T1/C1/", "T1/C1"+"0")
	if len(ms) != 3 {
		t.Errorf("whole channel C1: %d records, want 3", len(ms))
	}
}

func TestDeleteSyncCursorsBefore(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	for _, c := range []struct {
		platform, account string
		at                time.Time
	}{
		{"slack", "catch-up/T/C1", t1}, {"slack", "catch-up/T/C1/1.1", t3},
		{"slack", "other", t1}, {"matrix", "catch-up/x", t1},
	} {
		if err := s.SaveSyncCursor(ctx, c.platform, c.account, SyncCursor{NextBatch: "x"}, c.at); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteSyncCursorsBefore(ctx, "slack", "catch-up/", t2)
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
	for _, c := range []struct {
		platform, account string
		kept              bool
	}{
		{"slack", "catch-up/T/C1", false}, {"slack", "catch-up/T/C1/1.1", true},
		{"slack", "other", true}, {"matrix", "catch-up/x", true},
	} {
		got, err := s.SyncCursor(ctx, c.platform, c.account)
		if err != nil || (got.NextBatch == "x") != c.kept {
			t.Errorf("%s %s: %+v %v, kept want %v", c.platform, c.account, got, err, c.kept)
		}
	}
}
