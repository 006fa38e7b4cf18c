package scheduler

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		wantErr error
	}{
		{"0 2 * * *", nil},
		{"*/15 9-17 * * mon-fri", nil},
		{"@daily", nil},
		{"@hourly", nil},
		{"@every 30m", nil},
		{"CRON_TZ=Europe/Berlin 30 2 * * *", nil},
		{"TZ=America/New_York @daily", nil},
		{"0 0 29 2 *", nil}, // leap days only, but it fires
		{"", ErrInvalidSpec},
		{"   ", ErrInvalidSpec},
		{"61 * * * *", ErrInvalidSpec},
		{"* * *", ErrInvalidSpec},
		{"0 0 0 * * *", ErrInvalidSpec}, // no seconds field
		{"@fortnightly", ErrInvalidSpec},
		{"@every soon", ErrInvalidSpec},
		{"@every 500ms", ErrInvalidSpec},
		{"CRON_TZ=Europe/Berlin", ErrInvalidSpec}, // robfig itself panics on this
		{"CRON_TZ= 0 0 * * *", ErrInvalidSpec},
		{"CRON_TZ=Mars/Olympus_Mons 0 0 * * *", ErrUnknownTimeZone},
		{"0 0 30 2 *", ErrNeverFires},
		{"0 0 31 4 *", ErrNeverFires},
	} {
		_, err := Parse(tc.spec)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("Parse(%q) = %v, want %v", tc.spec, err, tc.wantErr)
		}
	}
}

func TestNextN(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name, spec string
		loc        *time.Location
		from       string
		want       []string
	}{
		{"daily UTC", "0 2 * * *", nil, "2026-01-01T03:00:00Z",
			[]string{"2026-01-02T02:00:00Z", "2026-01-03T02:00:00Z", "2026-01-04T02:00:00Z"}},
		{"zone from ParseIn", "0 2 * * *", berlin, "2026-01-01T03:00:00Z",
			[]string{"2026-01-02T01:00:00Z", "2026-01-03T01:00:00Z", "2026-01-04T01:00:00Z"}},
		{"CRON_TZ wins over loc", "CRON_TZ=UTC 0 2 * * *", berlin, "2026-01-01T03:00:00Z",
			[]string{"2026-01-02T02:00:00Z", "2026-01-03T02:00:00Z", "2026-01-04T02:00:00Z"}},
		// robfig/cron: 02:30 does not exist on 29 March in Berlin (02:00 → 03:00),
		// and that day has no run at all.
		{"Berlin spring forward skips the day", "CRON_TZ=Europe/Berlin 30 2 * * *", nil, "2026-03-27T12:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"}},
		// … and 02:30 happens twice on 25 October (03:00 → 02:00): it runs twice.
		{"Berlin fall back runs twice", "CRON_TZ=Europe/Berlin 30 2 * * *", nil, "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"}},
		{"every", "@every 90m", nil, "2026-01-01T00:00:00Z",
			[]string{"2026-01-01T01:30:00Z", "2026-01-01T03:00:00Z", "2026-01-01T04:30:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseIn(tc.spec, tc.loc)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range s.NextN(utc(tc.from), 3) {
				got = append(got, v.UTC().Format(time.RFC3339))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("NextN = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAnchoredEvery(t *testing.T) {
	s, _ := Parse("@every 20s")
	anchor := time.Date(2026, 1, 1, 0, 0, 7, 500_000_000, time.UTC)
	a := s.anchored(anchor).(anchoredEvery)
	base := time.Date(2026, 1, 1, 0, 0, 7, 0, time.UTC)
	for _, tc := range []struct{ in, want time.Duration }{
		{-time.Hour, 20 * time.Second},
		{0, 20 * time.Second},
		{19 * time.Second, 20 * time.Second},
		{20 * time.Second, 40 * time.Second},
		{3 * 24 * time.Hour, 3*24*time.Hour + 20*time.Second},
	} {
		if got := a.Next(base.Add(tc.in)); !got.Equal(base.Add(tc.want)) {
			t.Errorf("Next(+%v) = %v, want +%v", tc.in, got.Sub(base), tc.want)
		}
	}
	n, first, last := a.countBetween(base, base.Add(3*24*time.Hour))
	if n != 12960 || !first.Equal(base.Add(20*time.Second)) || !last.Equal(base.Add(3*24*time.Hour)) {
		t.Errorf("countBetween = %d %v %v", n, first, last)
	}
}
