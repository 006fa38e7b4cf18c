package main

import (
	"strings"
	"testing"
	"time"
)

func TestQuotaConfigDefaults(t *testing.T) {
	c, err := loadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Bot.MaxThreadsPerUser != 3 || c.Extensions.Schedules.MaxPerUser != 10 || c.Scheduler.MinInterval != 5*time.Minute {
		t.Errorf("defaults: threads %d, schedules %d, min interval %s; want 3, 10, 5m",
			c.Bot.MaxThreadsPerUser, c.Extensions.Schedules.MaxPerUser, c.Scheduler.MinInterval)
	}
}

func TestQuotaConfigSet(t *testing.T) {
	c, err := loadConfig([]string{
		"CLAUDEOPS_MAX_THREADS_PER_USER=5", "CLAUDEOPS_MAX_SCHEDULES_PER_USER=0", "CLAUDEOPS_SCHEDULE_MIN_INTERVAL=1h",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Bot.MaxThreadsPerUser != 5 || c.Scheduler.MinInterval != time.Hour {
		t.Errorf("got threads %d, min interval %s", c.Bot.MaxThreadsPerUser, c.Scheduler.MinInterval)
	}
	if c.Extensions.Schedules.MaxPerUser >= 0 {
		t.Errorf("CLAUDEOPS_MAX_SCHEDULES_PER_USER=0 should mean no cap (negative for the extension), got %d", c.Extensions.Schedules.MaxPerUser)
	}
	c, err = loadConfig([]string{"CLAUDEOPS_SCHEDULE_MIN_INTERVAL=0", "CLAUDEOPS_MAX_THREADS_PER_USER=0"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Scheduler.MinInterval >= 0 {
		t.Errorf("CLAUDEOPS_SCHEDULE_MIN_INTERVAL=0 should mean no minimum (negative for the scheduler), got %s", c.Scheduler.MinInterval)
	}
	if c.Bot.MaxThreadsPerUser >= 0 {
		t.Errorf("CLAUDEOPS_MAX_THREADS_PER_USER=0 should mean no cap (negative for the bot), got %d", c.Bot.MaxThreadsPerUser)
	}
}

// Every invalid value is reported at once, by its variable's name.
func TestQuotaConfigErrorsListedAtOnce(t *testing.T) {
	_, err := loadConfig([]string{
		"CLAUDEOPS_MAX_THREADS_PER_USER=-1", "CLAUDEOPS_MAX_SCHEDULES_PER_USER=-2",
		"CLAUDEOPS_SCHEDULE_MIN_INTERVAL=-5m", "CLAUDEOPS_MAX_SESSIONS=0",
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"CLAUDEOPS_MAX_THREADS_PER_USER", "CLAUDEOPS_MAX_SCHEDULES_PER_USER", "CLAUDEOPS_SCHEDULE_MIN_INTERVAL", "CLAUDEOPS_MAX_SESSIONS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	_, err = loadConfig([]string{"CLAUDEOPS_MAX_THREADS_PER_USER=many", "CLAUDEOPS_SCHEDULE_MIN_INTERVAL=soon"})
	if err == nil || !strings.Contains(err.Error(), "CLAUDEOPS_MAX_THREADS_PER_USER") || !strings.Contains(err.Error(), "CLAUDEOPS_SCHEDULE_MIN_INTERVAL") {
		t.Errorf("parse errors: %v", err)
	}
}
