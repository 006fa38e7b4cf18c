package scheduler

// Observer is told how scheduled slots ended, for metrics (cmd/claudeops
// wires in package metrics): once per slot as it is recorded, with its
// status (a store.RunStatus: succeeded, failed, timed_out, skipped,
// missed, interrupted), n slots at a time where one record stands for
// several (a missed row). A run left running by a bot that died is told
// as interrupted by the next start that records it so, and by no other.
// Calls must return at once.
type Observer interface {
	ScheduleRuns(status string, n int)
}

type nopObserver struct{}

func (nopObserver) ScheduleRuns(string, int) {}
