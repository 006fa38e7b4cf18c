package testkit

import (
	"testing"
	"time"
)

// WaitFor calls cond until it holds, failing t with what after timeout.
// It polls, first every millisecond, then less often: for a condition
// that no event announces (a process gone, a file written, another
// goroutine's state); where one does, wait for the event.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitForf(t, timeout, cond, func() string { return "still waiting for " + what })
}

// WaitForf is WaitFor that fails saying what describe returns then.
func WaitForf(t testing.TB, timeout time.Duration, cond func() bool, describe func() string) {
	t.Helper()
	if !Until(timeout, cond) {
		t.Fatalf("after %s: %s", timeout, describe())
	}
}

// Until polls cond as WaitFor does and says whether it held within
// timeout, for a caller that has more to do when it did not.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
	return true
}
