package scheduler

import (
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestNextEvery: what `schedule list` and `schedule add` show as the next
// runs of an "@every d" schedule is when it runs: robfig/cron's @every
// counts d from when the schedule was added (and from each run after),
// not from the moment someone asks. The clock is fixed.
func TestNextEvery(t *testing.T) {
	now := date("2026-03-10 12:00:00")
	tests := []struct {
		name    string
		spec    string
		created string
		want    []string
	}{
		{"added 10m ago, every hour", "@every 1h", "2026-03-10 11:50:00",
			[]string{"2026-03-10 12:50:00", "2026-03-10 13:50:00", "2026-03-10 14:50:00"}},
		{"added 3 days ago, every 7m", "@every 7m", "2026-03-07 12:00:30",
			[]string{"2026-03-10 12:06:30", "2026-03-10 12:13:30", "2026-03-10 12:20:30"}},
		{"added exactly one interval ago", "@every 30m", "2026-03-10 11:30:00",
			[]string{"2026-03-10 12:30:00", "2026-03-10 13:00:00", "2026-03-10 13:30:00"}},
		{"added now", "@every 45m", "2026-03-10 12:00:00",
			[]string{"2026-03-10 12:45:00", "2026-03-10 13:30:00", "2026-03-10 14:15:00"}},
		{"a fraction of a second is dropped, as robfig does", "@every 10m", "2026-03-10 11:55:00.750",
			[]string{"2026-03-10 12:05:00", "2026-03-10 12:15:00", "2026-03-10 12:25:00"}},
		{"in a zone: the same instants", "CRON_TZ=Asia/Kolkata @every 2h", "2026-03-10 09:20:00",
			[]string{"2026-03-10 13:20:00", "2026-03-10 15:20:00", "2026-03-10 17:20:00"}},
		{"a cron spec is not anchored", "0 * * * *", "2026-03-10 11:50:00",
			[]string{"2026-03-10 13:00:00", "2026-03-10 14:00:00", "2026-03-10 15:00:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Config{Now: func() time.Time { return now }, MinInterval: -1}, openStore(t, filepath.Join(t.TempDir(), "db")), &fakeRunner{})
			if err != nil {
				t.Fatal(err)
			}
			created, err := time.Parse("2006-01-02 15:04:05.999", tt.created)
			if err != nil {
				t.Fatal(err)
			}
			next, err := s.Next(Schedule{Spec: tt.spec, CreatedAt: created}, 3)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range next {
				got = append(got, n.UTC().Format(time.DateTime))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Next = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestNextEveryIsWhenItRuns: the next run Next tells of a running
// schedule is the slot the scheduler then runs, before and after a run.
func TestNextEveryIsWhenItRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &fakeRunner{}
		s, _ := start(t, openStore(t, filepath.Join(t.TempDir(), "db")), r, Config{})
		time.Sleep(17 * time.Second) // the schedule is added off any round time
		sc, err := s.Add(t.Context(), Schedule{Spec: "@every 1m", Prompt: "p", Platform: "console", Channel: "console", CreatedBy: "u"})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			next, err := s.Next(sc, 1)
			if err != nil || len(next) != 1 {
				t.Fatalf("Next = %v, %v", next, err)
			}
			sleepUntil(next[0].Add(time.Second))
			slots := r.slots()
			if len(slots) == 0 || slots[len(slots)-1] != next[0].UTC().Format(time.DateTime) {
				t.Fatalf("Next said %s; the runs were %v", next[0].UTC().Format(time.DateTime), slots)
			}
		}
	})
}
