package scheduler

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/store"
)

func TestCheckMinInterval(t *testing.T) {
	from := date("2026-01-01 00:00:00")
	for _, tc := range []struct {
		spec string
		min  time.Duration
		ok   bool
	}{
		{"@every 1s", 5 * time.Minute, false},
		{"@every 4m59s", 5 * time.Minute, false},
		{"@every 5m", 5 * time.Minute, true},
		{"*/1 * * * *", 5 * time.Minute, false},
		{"* * * * *", 5 * time.Minute, false},
		{"*/5 * * * *", 5 * time.Minute, true},
		{"0,3 * * * *", 5 * time.Minute, false}, // 3 min then 57
		{"0 2 * * *", 5 * time.Minute, true},    // the accepted example
		{"@hourly", 5 * time.Minute, true},      // descriptor
		{"0,1 2 1 6 *", 5 * time.Minute, false}, // close pair only on June 1st, months ahead
		{"58 23 * * *", 5 * time.Minute, true},  // day boundary: 24h
		{"0 0,23 * * *", 2 * time.Hour, false},  // 23:00 → 00:00 next day is 1h
		{"CRON_TZ=Europe/Berlin 30 1,2 * * *", time.Hour, true},
		{"CRON_TZ=America/New_York 0 1,3 * * *", 90 * time.Minute, false}, // 2h apart, but 1h on the spring-forward night
		{"@every 1s", -1, true},                                           // no minimum
		{"* * * * *", 0, true},
	} {
		sp, err := Parse(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		err = sp.CheckMinInterval(tc.min, from)
		if (err == nil) != tc.ok {
			t.Errorf("%q min %s: err %v, want ok=%v", tc.spec, tc.min, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrTooFrequent) || !strings.Contains(err.Error(), "minimum interval of "+fmtDuration(tc.min))) {
			t.Errorf("%q: error %q does not name the minimum", tc.spec, err)
		}
	}
}

// The minimum holds at Add, for a row written past Add (loaded by Run, not
// scheduled, RunNow refused), and is on by default.
func TestMinIntervalEnforced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := openStore(t, filepath.Join(t.TempDir(), "db"))
		sleepUntil(date("2026-01-01 00:00:30"))
		ctx := t.Context()
		// A row another process (or a hand edit) wrote without the check.
		id, err := st.AddSchedule(ctx, store.Schedule{Spec: "@every 1s", Prompt: "p", Platform: "console", Channel: "c",
			Overlap: OverlapSkip, ApprovalPolicy: ApprovalDeny, Timeout: time.Minute, CatchUp: time.Hour,
			CreatedAt: date("2026-01-01 00:00:00"), UpdatedAt: date("2026-01-01 00:00:00")})
		if err != nil {
			t.Fatal(err)
		}
		r := &fakeRunner{}
		s, stop := start(t, st, r, Config{MinInterval: 5 * time.Minute})
		if _, err := s.Add(ctx, Schedule{Spec: "@every 1s", Prompt: "p"}); !errors.Is(err, ErrTooFrequent) || !strings.Contains(err.Error(), "5m") {
			t.Errorf("Add @every 1s: %v", err)
		}
		if _, err := s.Add(ctx, Schedule{Spec: "*/1 * * * *", Prompt: "p"}); !errors.Is(err, ErrTooFrequent) {
			t.Errorf("Add */1: %v", err)
		}
		ok, err := s.Add(ctx, Schedule{Spec: "0 2 * * *", Prompt: "p"})
		if err != nil {
			t.Fatalf("Add 0 2 * * *: %v", err)
		}
		if _, err := s.RunNow(ctx, id); !errors.Is(err, ErrTooFrequent) {
			t.Errorf("RunNow of the row below the minimum: %v", err)
		}
		if err := s.SetPaused(ctx, id, true); err != nil {
			t.Errorf("pause of the row below the minimum: %v", err)
		}
		if err := s.SetPaused(ctx, id, false); !errors.Is(err, ErrTooFrequent) {
			t.Errorf("resume of the row below the minimum: %v", err)
		}
		if row, _, err := st.GetSchedule(ctx, id); err != nil || !row.Paused {
			t.Errorf("the row below the minimum after a refused resume: paused %v (%v), want still paused", row.Paused, err)
		}
		sleepUntil(date("2026-01-01 00:10:00"))
		stop()
		if n := len(r.slots()); n != 0 {
			t.Errorf("%d runs, want none: %v", n, r.slots())
		}
		checkLines(t, "runs of the row below the minimum", runLines(t, st, id), nil)
		checkLines(t, "runs of 0 2 * * *", runLines(t, st, ok.ID), nil)
	})
	s, err := New(Config{}, openStore(t, filepath.Join(t.TempDir(), "db2")), &fakeRunner{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(context.Background(), Schedule{Spec: "@every 4m", Prompt: "p"}); !errors.Is(err, ErrTooFrequent) {
		t.Errorf("default minimum: Add @every 4m: %v", err)
	}
}
