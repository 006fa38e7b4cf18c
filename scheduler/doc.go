// Package scheduler runs recurring prompts on robfig/cron/v3: schedules
// persisted in the store and reloaded at start, an overlap policy, timeouts,
// catch-up after downtime, each (schedule, time) claimed once, and results
// posted and stored. It runs prompts through a small Runner interface that
// bot satisfies.
package scheduler
