package threadtest

import (
	"context"
	"time"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// Store is a fake thread.Reader over canned records; Err, when set, is
// every query's error.
type Store struct {
	Channels  map[string]store.Channel
	Idle      []store.Thread
	Spent     map[string]float64 // by thread key
	DaySpent  map[string]float64 // by channel key: spent since the day's start
	Schedules []store.Schedule
	RunsOf    map[int64][]store.ScheduleRun
	Err       error
}

var _ thread.Reader = (*Store)(nil)

func (s *Store) GetChannel(_ context.Context, key string) (store.Channel, bool, error) {
	c, ok := s.Channels[key]
	return c, ok, s.Err
}

func (s *Store) IdleWorktrees(_ context.Context, before time.Time) ([]store.Thread, error) {
	var out []store.Thread
	for _, t := range s.Idle {
		if t.LastActivity.Before(before) {
			out = append(out, t)
		}
	}
	return out, s.Err
}

func (s *Store) ThreadUsage(_ context.Context, key string) (store.Usage, error) {
	return store.Usage{CostUSD: s.Spent[key]}, s.Err
}

func (s *Store) ThreadTurns(context.Context, string) ([]store.Turn, error) { return nil, s.Err }

func (s *Store) ChannelUsageSince(_ context.Context, key string, _ time.Time) (store.Usage, error) {
	return store.Usage{CostUSD: s.DaySpent[key]}, s.Err
}

func (s *Store) GetSchedule(_ context.Context, id int64) (store.Schedule, bool, error) {
	for _, sc := range s.Schedules {
		if sc.ID == id {
			return sc, true, s.Err
		}
	}
	return store.Schedule{}, false, s.Err
}

func (s *Store) ListSchedules(context.Context) ([]store.Schedule, error) { return s.Schedules, s.Err }

func (s *Store) Runs(_ context.Context, id int64, limit int) ([]store.ScheduleRun, error) {
	r := s.RunsOf[id]
	if len(r) > limit {
		r = r[:limit]
	}
	return r, s.Err
}
