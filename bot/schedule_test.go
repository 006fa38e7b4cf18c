package bot

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/scheduler"
)

// waitRun waits until the schedule's newest run has the status.
func waitRun(t *testing.T, h *harness, id, status string) {
	t.Helper()
	n, _ := strconv.ParseInt(id, 10, 64)
	testkit.WaitFor(t, waitTimeout, "schedule "+id+"'s newest run to be "+status, func() bool {
		runs, err := h.st.Runs(context.Background(), n, 1)
		return err == nil && len(runs) > 0 && string(runs[0].Status) == status
	})
}

// startScheduler runs a scheduler for the harness's current bot; the
// returned func stops it (before the bot).
func startScheduler(t *testing.T, h *harness) func() {
	t.Helper()
	// TestConsoleSchedules runs an "@every 20s" schedule.
	return startSchedulerWith(t, h, scheduler.Config{MinInterval: 10 * time.Second})
}

// startSchedulerWith is startScheduler with cfg (zero: the defaults).
func startSchedulerWith(t *testing.T, h *harness, cfg scheduler.Config) func() {
	t.Helper()
	sch, err := scheduler.New(cfg, h.st, h.b)
	if err != nil {
		t.Fatal(err)
	}
	h.sched.SetScheduler(sch)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = sch.Run(ctx) }()
	return func() { cancel(); <-done }
}

func TestConsoleSchedules(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	stop := startScheduler(t, h)

	h.say(`schedule add "61 * * * *" never`)
	h.expect(`\* Not scheduled: `)
	h.say(`schedule add "CRON_TZ=Mars/Olympus 0 * * * *" never`)
	h.expect(`\* Not scheduled: .*Mars/Olympus`)
	h.say(`schedule add "0 0 30 2 *" never`)
	h.expect(`\* Not scheduled: `)

	h.say(`schedule add "@every 20s" say hi from the schedule`)
	id := h.expect(`^\[main\] \* Schedule (\d+): ` + "`@every 20s`" + ` — say hi from the schedule$`)[1]
	h.expect(`^\[main\] \* Next runs: \S+ \S+ \S+, \S+ \S+ \S+, \S+ \S+ \S+$`)
	// It runs on its own, in a thread of its own, and posts the result.
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.expect(`^\[` + run + `\] claude: ok: say hi from the schedule$`)
	h.expect(`^\[` + run + `\] — ✓`)
	h.say("schedule pause " + id) // no more runs while the rest is checked
	h.expect(`Schedule ` + id + ` paused\.`)
	waitRun(t, h, id, "succeeded")
	h.say("schedule runs " + id)
	h.expect(`\* \S+ \S+ · succeeded · .* · thread console/console/` + run)
	h.say("schedule list")
	h.expect(id + `\. ` + "`@every 20s`" + ` — say hi from the schedule · by operator \(paused\)`)

	// An unattended run that asks for a tool is denied.
	h.say(`schedule add "0 3 * * *" run touch sched.txt`)
	id2 := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule run " + id2)
	start := h.cursor // the reply and the run's thread come in either order
	h.expect(`Schedule ` + id2 + ` runs now`)
	h.cursor = start
	run2 := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id2)[1]
	h.expect(`^\[` + run2 + `\] \* Bash was denied: unattended scheduled run`)
	h.expect(`^\[` + run2 + `\] claude: tool result: This is an unattended scheduled run`)
	if _, err := os.Stat(filepath.Join(h.workdir, "sched.txt")); !os.IsNotExist(err) {
		t.Errorf("unattended run ran the tool: %v", err)
	}
	// People can carry on in the run's thread.
	h.say("/thread " + run2)
	h.say("thanks")
	h.expect(`^\[` + run2 + `\] claude: ok: .*thanks`)

	// With --park, the request waits for the creator (or an admin) instead.
	h.say("/thread main")
	h.say(`schedule add "0 3 * * *" --park --timeout 10m run touch parked.txt`)
	id3 := h.expect(`\* Schedule (\d+): ` + "`0 3 \\* \\* \\*`" + ` — run touch parked.txt$`)[1]
	h.say("schedule run " + id3)
	run3 := h.expect(`^\[(run-\w+)\] \? approval \w+: Bash wants to run`)[1]
	h.say("/thread " + run3)
	h.say("allow")
	h.expect(`^\[` + run3 + `\] ! approval \w+: Allowed by operator$`)
	waitRun(t, h, id3, "succeeded")
	if _, err := os.Stat(filepath.Join(h.workdir, "parked.txt")); err != nil {
		t.Errorf("parked and approved run did not run the tool: %v", err)
	}
	h.say("/thread main")
	h.say(`schedule add "0 3 * * *" --bogus x`)
	h.expect(`Not scheduled: unknown option --bogus`)

	// A restart keeps every schedule.
	stop()
	h.restart()
	stop = startScheduler(t, h)
	defer stop()
	h.say("/thread main")
	h.say("schedule list")
	h.expect(id + `\. ` + "`@every 20s`" + `.*\(paused\)`)
	h.expect(id2 + `\. ` + "`0 3 \\* \\* \\*`" + ` — run touch sched.txt`)
	h.say("/as bob schedule rm " + id2)
	h.expect(`\(to bob\) Only the schedule's creator \(operator\) or an admin can do that\.`)
	h.say("schedule rm " + id2)
	h.expect(`Schedule ` + id2 + ` removed\.`)
}

// TestReplyQueuedBehindScheduledRunIsAnswered: a reply sent into a
// scheduled run's thread while the run's turn is still going is queued
// in its claude; the run's end must not close that claude under it (it
// did: the reply was shown "Taken up", then "Stopped", never answered).
func TestReplyQueuedBehindScheduledRunIsAnswered(t *testing.T) {
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h := newHarness(t, script(hold), nil)
	stop := startScheduler(t, h)
	defer stop()

	h.say(`schedule add "0 3 * * *" slow chore`)
	id := h.expect(`\* Schedule (\d+): `)[1]
	h.say("schedule run " + id)
	start := h.cursor
	run := h.expect(`^\[(run-\w+)\] \* ⏰ Scheduled run of #` + id)[1]
	h.cursor = start
	h.api.WaitRequests(1, waitTimeout) // the run's answer is streaming, held
	h.say("/thread " + run)
	h.say("thanks")
	h.expect(`^\[` + run + `\] \* Queued: “thanks”`)
	release()
	h.expect(`^\[` + run + `\] claude: ok: .*thanks`)
	waitRun(t, h, id, "succeeded")
}
