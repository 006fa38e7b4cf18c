package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Errors of Parse, wrapped with the detail.
var (
	ErrInvalidSpec     = errors.New("invalid schedule spec")
	ErrUnknownTimeZone = errors.New("unknown time zone")
	ErrNeverFires      = errors.New("schedule never fires")
)

// parser reads the standard 5-field crontab (minute hour dom month dow) and
// the descriptors (@yearly … @hourly, @every <duration>). No seconds field.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// neverFiresRef is where Parse looks for a first run. robfig's Next searches
// five years ahead, so a spec without a time in that span ("0 0 30 2 *")
// never fires; anything else (even Feb 29) fires within five years of any
// date.
var neverFiresRef = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Spec is a parsed schedule spec. The zero Spec is not valid.
type Spec struct {
	text  string
	loc   *time.Location // where the spec's fields are read
	tz    string         // the CRON_TZ= prefix's zone name, "" without one
	sched cron.Schedule
	every time.Duration // > 0 for "@every d"
}

// Parse parses spec in UTC unless it starts with a CRON_TZ= (or TZ=) prefix.
// See ParseIn.
func Parse(spec string) (Spec, error) { return ParseIn(spec, time.UTC) }

// ParseIn parses a 5-field cron spec or a descriptor (@daily, @hourly,
// @every 30m, …), optionally prefixed with "CRON_TZ=<IANA zone> ". The
// prefix's zone wins over loc, which is used otherwise (nil means UTC). It
// reports ErrInvalidSpec, ErrUnknownTimeZone or ErrNeverFires (wrapped).
func ParseIn(spec string, loc *time.Location) (Spec, error) {
	if loc == nil {
		loc = time.UTC
	}
	text := strings.TrimSpace(spec)
	rest := text
	var tz string
	if strings.HasPrefix(rest, "TZ=") || strings.HasPrefix(rest, "CRON_TZ=") {
		// Parsed here rather than by robfig, whose prefix handling panics on
		// a prefix without a schedule after it.
		prefix, after, ok := strings.Cut(rest, " ")
		_, tz, _ = strings.Cut(prefix, "=")
		if !ok || strings.TrimSpace(after) == "" {
			return Spec{}, fmt.Errorf("%w %q: time zone %q without a schedule", ErrInvalidSpec, text, tz)
		}
		if tz == "" {
			return Spec{}, fmt.Errorf("%w %q: empty time zone", ErrInvalidSpec, text)
		}
		l, err := time.LoadLocation(tz)
		if err != nil {
			return Spec{}, fmt.Errorf("%w %q in %q", ErrUnknownTimeZone, tz, text)
		}
		loc, rest = l, strings.TrimSpace(after)
	}
	if rest == "" {
		return Spec{}, fmt.Errorf("%w: empty", ErrInvalidSpec)
	}
	s := Spec{text: text, loc: loc, tz: tz}
	if d, ok := strings.CutPrefix(rest, "@every "); ok {
		every, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil {
			return Spec{}, fmt.Errorf("%w %q: %v", ErrInvalidSpec, text, err)
		}
		if every < time.Second {
			return Spec{}, fmt.Errorf("%w %q: @every needs at least 1s", ErrInvalidSpec, text)
		}
		s.every = every.Truncate(time.Second) // as robfig's Every does
		s.sched = cron.Every(s.every)
		return s, nil
	}
	sched, err := parser.Parse(rest)
	if err != nil {
		return Spec{}, fmt.Errorf("%w %q: %v", ErrInvalidSpec, text, err)
	}
	ss, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return Spec{}, fmt.Errorf("%w %q: unexpected schedule type %T", ErrInvalidSpec, text, sched)
	}
	cp := *ss
	cp.Location = loc
	s.sched = &cp
	if s.sched.Next(neverFiresRef).IsZero() {
		return Spec{}, fmt.Errorf("%w: %q has no time in any five-year span", ErrNeverFires, text)
	}
	return s, nil
}

// String is the spec as written (trimmed).
func (s Spec) String() string { return s.text }

// Location is the zone the spec's fields are read in.
func (s Spec) Location() *time.Location { return s.loc }

// TimeZone is the zone named by a CRON_TZ= prefix, "" if there is none.
func (s Spec) TimeZone() string { return s.tz }

// Every is the interval of an "@every" spec, 0 for others.
func (s Spec) Every() time.Duration { return s.every }

// Next is the first time after t the spec fires, in the spec's location
// (zero if none within five years). An "@every d" spec fires at t+d
// (rounded down to the second) here; a Scheduler anchors it at the
// schedule's creation instead, so that every process agrees on its times.
func (s Spec) Next(t time.Time) time.Time {
	if s.sched == nil {
		return time.Time{}
	}
	return s.sched.Next(t).In(s.loc)
}

// NextN returns the next n times after from (fewer if the spec stops).
func (s Spec) NextN(from time.Time, n int) []time.Time {
	var out []time.Time
	for t := from; len(out) < n; {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// anchored is the schedule a Scheduler runs: an "@every d" spec fires at
// anchor + k·d (k ≥ 1, anchor truncated to the second), a cron spec at its
// own times. Either way every process computes the same slots.
func (s Spec) anchored(anchor time.Time) cron.Schedule {
	if s.every == 0 {
		return s.sched
	}
	return anchoredEvery{anchor: anchor.Truncate(time.Second).In(s.loc), every: s.every}
}

type anchoredEvery struct {
	anchor time.Time
	every  time.Duration
}

func (a anchoredEvery) Next(t time.Time) time.Time {
	if t.Before(a.anchor) {
		return a.anchor.Add(a.every)
	}
	k := t.Sub(a.anchor)/a.every + 1
	return a.anchor.Add(k * a.every)
}

// countBetween returns how many slots lie in (from, to], and the first and
// last, in constant time.
func (a anchoredEvery) countBetween(from, to time.Time) (n int64, first, last time.Time) {
	first = a.Next(from)
	if first.After(to) {
		return 0, time.Time{}, time.Time{}
	}
	n = int64(to.Sub(first)/a.every) + 1
	return n, first, first.Add(time.Duration(n-1) * a.every)
}

// Bounds of CheckMinInterval's walk over a cron spec's firings.
const (
	minGapFirings = 10_000
	minGapSpan    = 366 * 24 * time.Hour
)

// CheckMinInterval reports (wrapping ErrTooFrequent) whether two firings of
// s can be closer than min: for "@every d", d itself; for a cron spec, the
// gaps between its firings from from on, up to 10,000 of them or a year,
// whichever ends first (enough to see every pattern a 5-field spec has,
// DST changes included). min <= 0 checks nothing.
func (s Spec) CheckMinInterval(min time.Duration, from time.Time) error {
	if min <= 0 || s.sched == nil {
		return nil
	}
	if s.every > 0 {
		if s.every < min {
			return fmt.Errorf("%w: %q runs every %s, more often than the minimum interval of %s (CLAUDEOPS_SCHEDULE_MIN_INTERVAL)",
				ErrTooFrequent, s.text, fmtDuration(s.every), fmtDuration(min))
		}
		return nil
	}
	end := from.Add(minGapSpan)
	prev := s.sched.Next(from)
	for i := 0; i < minGapFirings && !prev.IsZero() && prev.Before(end); i++ {
		next := s.sched.Next(prev)
		if next.IsZero() {
			break
		}
		if gap := next.Sub(prev); gap < min {
			return fmt.Errorf("%w: %q can run %s apart (%s then %s), more often than the minimum interval of %s (CLAUDEOPS_SCHEDULE_MIN_INTERVAL)",
				ErrTooFrequent, s.text, fmtDuration(gap), prev.In(s.loc).Format("2006-01-02 15:04 MST"),
				next.In(s.loc).Format("15:04 MST"), fmtDuration(min))
		}
		prev = next
	}
	return nil
}

// fmtDuration writes 5m rather than 5m0s.
func fmtDuration(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}
