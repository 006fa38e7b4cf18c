package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/claudeops/claudeops/store"
)

// fakeRunner records its calls and behaves as fn says (default: succeed at
// once).
type fakeRunner struct {
	mu    sync.Mutex
	calls []time.Time // slots, in call order
	fn    func(ctx context.Context, n int, sc Schedule, slot time.Time) (Run, error)
}

func (f *fakeRunner) RunScheduled(ctx context.Context, sc Schedule, slot time.Time) (Run, error) {
	f.mu.Lock()
	f.calls = append(f.calls, slot)
	n := len(f.calls)
	f.mu.Unlock()
	if f.fn != nil {
		return f.fn(ctx, n, sc, slot)
	}
	return Run{SessionID: "s-" + slot.UTC().Format("1504"), Result: "ok", CostUSD: 0.5, NumTurns: 2}, nil
}

func (f *fakeRunner) slots() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, s := range f.calls {
		out = append(out, s.UTC().Format(time.DateTime))
	}
	return out
}

// sleepFor blocks for d, honouring ctx, as a well-behaved runner does.
func sleepFor(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func openStore(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// start runs a Scheduler until the returned stop is called (or the test
// ends); stop waits for Run to return.
func start(t *testing.T, st Store, r Runner, cfg Config) (*Scheduler, func()) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MinInterval == 0 {
		// These tests use minutely and @every 20s specs; the minimum has
		// tests of its own (TestMinInterval…).
		cfg.MinInterval = -1
	}
	s, err := New(cfg, st, r)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	synctest.Wait() // loaded, caught up, started
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s, stop
}

func sleepUntil(at time.Time) {
	time.Sleep(time.Until(at))
	synctest.Wait()
}

func date(s string) time.Time {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t
}

// runLine is a run in a test's terms: slot and status, and the extras.
func runLine(r Run) string {
	s := r.Slot.Format(time.DateTime) + " " + string(r.Status)
	if r.Missed > 0 {
		s += fmt.Sprintf(" x%d", r.Missed)
	}
	return s
}

// runs returns schedule id's runs, oldest slot first.
func runs(t *testing.T, st *store.Store, id int64) []Run {
	t.Helper()
	rs, err := st.Runs(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(rs)
	return rs
}

func runLines(t *testing.T, st *store.Store, id int64) []string {
	var out []string
	for _, r := range runs(t, st, id) {
		out = append(out, runLine(r))
	}
	return out
}

func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestDueSlotsRunOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := openStore(t, filepath.Join(t.TempDir(), "db"))
		sleepUntil(date("2026-01-01 00:00:30"))
		r := &fakeRunner{}
		s, stop := start(t, st, r, Config{})
		sc, err := s.Add(t.Context(), Schedule{Spec: "*/15 * * * *", Prompt: "p", Platform: "console", Channel: "c"})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Timeout != 30*time.Minute || sc.Overlap != "skip" || sc.CatchUp != time.Hour || sc.ApprovalPolicy != "deny" || sc.TimeZone != "UTC" {
			t.Errorf("defaults: %+v", sc)
		}
		sleepUntil(date("2026-01-01 01:00:30"))
		stop()
		checkLines(t, "runs", runLines(t, st, sc.ID), []string{
			"2026-01-01 00:15:00 succeeded", "2026-01-01 00:30:00 succeeded",
			"2026-01-01 00:45:00 succeeded", "2026-01-01 01:00:00 succeeded",
		})
		checkLines(t, "runner calls", r.slots(), []string{
			"2026-01-01 00:15:00", "2026-01-01 00:30:00", "2026-01-01 00:45:00", "2026-01-01 01:00:00",
		})
		last := runs(t, st, sc.ID)[3]
		if last.SessionID != "s-0100" || last.Result != "ok" || last.CostUSD != 0.5 || last.NumTurns != 2 ||
			!last.StartedAt.Equal(last.Slot) || !last.EndedAt.Equal(last.Slot) {
			t.Errorf("last run = %+v", last)
		}
	})
}

// TestDST documents robfig/cron's behaviour for a 02:30 Europe/Berlin
// schedule: on the spring-forward day 02:30 does not exist and there is no
// run; on the fall-back day 02:30 happens twice and it runs twice (two
// distinct instants, so two slots).
func TestDST(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           []string // UTC
	}{
		{"spring forward", "2026-03-27 12:00:00", "2026-03-31 12:00:00", []string{
			"2026-03-28 01:30:00 succeeded", // 02:30 CET
			"2026-03-30 00:30:00 succeeded", // 02:30 CEST; none on the 29th
			"2026-03-31 00:30:00 succeeded",
		}},
		{"fall back", "2026-10-23 12:00:00", "2026-10-26 12:00:00", []string{
			"2026-10-24 00:30:00 succeeded", // 02:30 CEST
			"2026-10-25 00:30:00 succeeded", // 02:30 CEST
			"2026-10-25 01:30:00 succeeded", // 02:30 CET, the same wall time again
			"2026-10-26 01:30:00 succeeded",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := openStore(t, filepath.Join(t.TempDir(), "db"))
				sleepUntil(date(tc.from))
				r := &fakeRunner{}
				s, stop := start(t, st, r, Config{})
				var ids []int64
				for _, spec := range []Schedule{
					{Spec: "CRON_TZ=Europe/Berlin 30 2 * * *"},
					{Spec: "30 2 * * *", TimeZone: "Europe/Berlin"},
				} {
					sc, err := s.Add(t.Context(), spec)
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, sc.ID)
				}
				sleepUntil(date(tc.to))
				stop()
				for _, id := range ids {
					checkLines(t, fmt.Sprint("schedule ", id), runLines(t, st, id), tc.want)
				}
				for _, c := range r.calls {
					if c.Location().String() != "Europe/Berlin" || c.Minute() != 30 || c.Hour() != 2 {
						t.Errorf("runner got slot %v", c)
					}
				}
			})
		})
	}
}

// TestCatchUp: after downtime, the latest missed slot runs if it is inside
// the catch-up window, and the others become one 'missed' row counting them.
func TestCatchUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sc       Schedule
		created  string
		lastSlot string // a run recorded before the downtime; "" none
		restart  string
		want     []string // runs after catch-up, excluding lastSlot's
	}{
		{"3-day downtime of @every 20s: one run, one summary row",
			Schedule{Spec: "@every 20s"}, "2026-01-05 00:00:00", "2026-01-05 00:00:20", "2026-01-08 00:00:25",
			[]string{"2026-01-08 00:00:00 missed x12959", "2026-01-08 00:00:20 succeeded"}},
		{"daily, restart inside the window",
			Schedule{Spec: "@daily"}, "2026-01-04 23:00:00", "2026-01-05 00:00:00", "2026-01-08 00:30:00",
			[]string{"2026-01-07 00:00:00 missed x2", "2026-01-08 00:00:00 succeeded"}},
		{"daily, restart past the window",
			Schedule{Spec: "@daily"}, "2026-01-04 23:00:00", "2026-01-05 00:00:00", "2026-01-08 02:00:00",
			[]string{"2026-01-08 00:00:00 missed x3"}},
		{"daily, wider window",
			Schedule{Spec: "@daily", CatchUp: 3 * time.Hour}, "2026-01-04 23:00:00", "2026-01-05 00:00:00", "2026-01-08 02:00:00",
			[]string{"2026-01-07 00:00:00 missed x2", "2026-01-08 00:00:00 succeeded"}},
		{"never ran: counted from creation",
			Schedule{Spec: "@hourly"}, "2026-01-05 00:50:00", "", "2026-01-05 01:10:00",
			[]string{"2026-01-05 01:00:00 succeeded"}},
		{"no slot missed",
			Schedule{Spec: "@hourly"}, "2026-01-05 00:50:00", "", "2026-01-05 00:55:00", nil},
		{"paused schedules are not caught up",
			Schedule{Spec: "@hourly", Paused: true}, "2026-01-05 00:50:00", "", "2026-01-05 05:10:00", nil},
		{"minutely for 80 days: enumeration capped, latest still runs",
			Schedule{Spec: "* * * * *"}, "2026-01-01 00:00:00", "", "2026-03-22 00:00:30",
			[]string{"2026-03-21 23:59:00 missed x100059", "2026-03-22 00:00:00 succeeded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				st := openStore(t, filepath.Join(t.TempDir(), "db"))
				sleepUntil(date(tc.created))
				sc := tc.sc
				sc.CreatedAt = date(tc.created)
				id, err := st.AddSchedule(ctx, sc)
				if err != nil {
					t.Fatal(err)
				}
				if tc.lastSlot != "" {
					sleepUntil(date(tc.lastSlot))
					st.RecordRun(ctx, Run{ScheduleID: id, Slot: date(tc.lastSlot), Status: store.RunSucceeded})
				}
				sleepUntil(date(tc.restart))
				r := &fakeRunner{}
				_, stop := start(t, st, r, Config{})
				stop()
				got := runLines(t, st, id)
				if tc.lastSlot != "" {
					got = got[1:]
				}
				checkLines(t, "runs", got, tc.want)
			})
		})
	}
}

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		overlap string
		want    []string
	}{
		{"skip", []string{
			"2026-01-01 00:01:00 succeeded",
			"2026-01-01 00:02:00 skipped",
			"2026-01-01 00:03:00 interrupted", // running at shutdown
		}},
		{"queue", []string{
			"2026-01-01 00:01:00 succeeded",
			"2026-01-01 00:02:00 interrupted", // ran from 00:02:40, cut off at shutdown
			"2026-01-01 00:03:00 interrupted", // queued, never started
		}},
	} {
		t.Run(tc.overlap, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := openStore(t, filepath.Join(t.TempDir(), "db"))
				sleepUntil(date("2026-01-01 00:00:30"))
				r := &fakeRunner{fn: func(ctx context.Context, _ int, _ Schedule, _ time.Time) (Run, error) {
					return Run{}, sleepFor(ctx, 100*time.Second)
				}}
				s, stop := start(t, st, r, Config{})
				sc, err := s.Add(t.Context(), Schedule{Spec: "* * * * *", Overlap: tc.overlap})
				if err != nil {
					t.Fatal(err)
				}
				sleepUntil(date("2026-01-01 00:03:30"))
				stop()
				rs := runs(t, st, sc.ID)
				var got []string
				for _, r := range rs {
					got = append(got, runLine(r))
				}
				checkLines(t, "runs", got, tc.want)
				if tc.overlap == "queue" && len(rs) == 3 {
					if want := date("2026-01-01 00:02:40"); !rs[1].StartedAt.Equal(want) {
						t.Errorf("queued run started %v, want %v", rs[1].StartedAt, want)
					}
					if !rs[1].EndedAt.Equal(date("2026-01-01 00:03:30")) {
						t.Errorf("interrupted run ended %v", rs[1].EndedAt)
					}
				}
			})
		})
	}
}

// TestRunOutcomes: whatever the runner does, the run is recorded and the
// next slot runs.
func TestRunOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		first   func(ctx context.Context) (Run, error)
		status  store.RunStatus
		errPart string
		took    time.Duration
	}{
		{"timeout", func(ctx context.Context) (Run, error) {
			return Run{SessionID: "half"}, sleepFor(ctx, time.Hour)
		}, store.RunTimedOut, "timed out after 5m0s", 5 * time.Minute},
		{"runner ignores its context", func(ctx context.Context) (Run, error) {
			time.Sleep(20 * time.Minute)
			return Run{}, nil
		}, store.RunTimedOut, "did not return within 10s", 5*time.Minute + 10*time.Second},
		{"error", func(ctx context.Context) (Run, error) {
			return Run{}, errors.New("claude crashed")
		}, store.RunFailed, "claude crashed", 0},
		{"panic", func(ctx context.Context) (Run, error) {
			panic("boom")
		}, store.RunFailed, "runner panicked: boom", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := openStore(t, filepath.Join(t.TempDir(), "db"))
				sleepUntil(date("2026-01-01 00:00:10"))
				r := &fakeRunner{fn: func(ctx context.Context, n int, _ Schedule, _ time.Time) (Run, error) {
					if n == 1 {
						return tc.first(ctx)
					}
					return Run{Result: "fine"}, nil
				}}
				s, stop := start(t, st, r, Config{})
				sc, err := s.Add(t.Context(), Schedule{Spec: "*/30 * * * *", Timeout: 5 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				sleepUntil(date("2026-01-01 01:00:10"))
				stop()
				rs := runs(t, st, sc.ID)
				if len(rs) != 2 {
					t.Fatalf("runs = %v", runLines(t, st, sc.ID))
				}
				if rs[0].Status != tc.status || !strings.Contains(rs[0].Error, tc.errPart) || rs[0].EndedAt.Sub(rs[0].StartedAt) != tc.took {
					t.Errorf("first run: %s %q took %v; want %s %q %v", rs[0].Status, rs[0].Error,
						rs[0].EndedAt.Sub(rs[0].StartedAt), tc.status, tc.errPart, tc.took)
				}
				if rs[1].Status != store.RunSucceeded || rs[1].Result != "fine" {
					t.Errorf("second run: %+v", rs[1])
				}
			})
		})
	}
}

// TestTwoSchedulersOneDatabase: two processes' worth (two Stores on one
// file, two Schedulers) fire at the same instants; each slot runs once.
func TestTwoSchedulersOneDatabase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "db")
		a, b := openStore(t, path), openStore(t, path)
		sleepUntil(date("2026-01-01 00:00:30"))
		id, err := a.AddSchedule(t.Context(), Schedule{Spec: "*/5 * * * *", CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		ra, rb := &fakeRunner{}, &fakeRunner{}
		_, stopA := start(t, a, ra, Config{})
		_, stopB := start(t, b, rb, Config{})
		sleepUntil(date("2026-01-01 01:00:30"))
		stopA()
		stopB()
		all := append(ra.slots(), rb.slots()...)
		slices.Sort(all)
		if len(all) != 12 || len(slices.Compact(slices.Clone(all))) != 12 {
			t.Errorf("runner calls: a %v, b %v; want each of 12 slots once", ra.slots(), rb.slots())
		}
		lines := runLines(t, b, id)
		if len(lines) != 12 {
			t.Errorf("runs: %q", lines)
		}
		for _, l := range lines {
			if !strings.HasSuffix(l, "succeeded") {
				t.Errorf("run %s", l)
			}
		}
	})
}

func TestLiveChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st := openStore(t, filepath.Join(t.TempDir(), "db"))
		sleepUntil(date("2026-01-01 00:00:30"))
		r := &fakeRunner{}
		s, stop := start(t, st, r, Config{})
		if _, err := s.Add(ctx, Schedule{Spec: "0 0 30 2 *"}); !errors.Is(err, ErrNeverFires) {
			t.Errorf("Add never-firing = %v", err)
		}
		if _, err := s.Add(ctx, Schedule{Spec: "@daily", Overlap: "replace"}); !errors.Is(err, ErrInvalidSchedule) {
			t.Errorf("Add bad overlap = %v", err)
		}
		sc, err := s.Add(ctx, Schedule{Spec: "*/10 * * * *"})
		if err != nil {
			t.Fatal(err)
		}
		sleepUntil(date("2026-01-01 00:25:00"))
		if err := s.SetPaused(ctx, sc.ID, true); err != nil {
			t.Fatal(err)
		}
		sleepUntil(date("2026-01-01 00:45:00"))
		slot, err := s.RunNow(ctx, sc.ID) // paused, still runs on demand
		if err != nil || !slot.Equal(date("2026-01-01 00:45:00")) {
			t.Errorf("RunNow = %v, %v", slot, err)
		}
		synctest.Wait()
		if err := s.SetPaused(ctx, sc.ID, false); err != nil {
			t.Fatal(err)
		}
		sleepUntil(date("2026-01-01 00:55:00"))
		checkLines(t, "runs", runLines(t, st, sc.ID), []string{
			"2026-01-01 00:10:00 succeeded", "2026-01-01 00:20:00 succeeded",
			"2026-01-01 00:45:00 succeeded", // RunNow
			"2026-01-01 00:50:00 succeeded", // resumed; 00:30 and 00:40 not caught up
		})
		if err := s.Remove(ctx, sc.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Remove(ctx, sc.ID); !errors.Is(err, ErrUnknownSchedule) {
			t.Errorf("second Remove = %v", err)
		}
		if _, err := s.RunNow(ctx, sc.ID); !errors.Is(err, ErrUnknownSchedule) {
			t.Errorf("RunNow removed = %v", err)
		}
		sleepUntil(date("2026-01-01 02:00:00"))
		if n := len(r.slots()); n != 4 {
			t.Errorf("runner calls = %v; want 4", r.slots())
		}
		stop()
		if _, err := s.RunNow(ctx, sc.ID); !errors.Is(err, ErrNotRunning) {
			t.Errorf("RunNow after stop = %v", err)
		}
	})
}
