package bot

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/scheduler"
	"github.com/claudeops/claudeops/store"
)

// holdRelease is a hold channel for script's "slow" replies and its
// (idempotent) release, also run at cleanup.
func holdRelease(t *testing.T) (chan struct{}, func()) {
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	return hold, release
}

func (h *harness) held(thread string) bool {
	h.b.slots.mu.Lock()
	defer h.b.slots.mu.Unlock()
	return h.b.slots.held["console/console/"+thread] != nil
}

// idleHeld: thread holds a slot it could give back (its turn is over: the
// footer is posted just before the slot is marked idle).
func (h *harness) idleHeld(thread string) bool {
	h.b.slots.mu.Lock()
	defer h.b.slots.mu.Unlock()
	sl := h.b.slots.held["console/console/"+thread]
	return sl != nil && !sl.busy && !sl.evicting
}

// count is how many output lines match pattern.
func (h *harness) count(pattern string) int {
	re := regexp.MustCompile(pattern)
	n := 0
	for _, l := range h.out.Lines() {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// refusals counts the audited per-user-limit refusals of user.
func (h *harness) refusals(user string) int {
	h.t.Helper()
	es, err := h.st.AuditLog(context.Background(), "", 0)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.UserID == user && e.Action == "refused" && e.Target == "thread" {
			n++
		}
	}
	return n
}

// CLAUDEOPS_MAX_THREADS_PER_USER: a user at the limit gives back their own
// idle session first; with none idle the message is refused, told once a
// minute, audited every time; admins are exempt.
func TestConsoleThreadsPerUser(t *testing.T) {
	hold, release := holdRelease(t)
	var skew atomic.Int64 // moves the bot's clock forward
	h := newHarness(t, script(hold), func(c *testConfig) {
		c.MaxThreadsPerUser = 2
		c.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	for _, th := range []string{"a", "b"} {
		h.say("/thread " + th)
		h.say("/as bob hello " + th)
		h.expect(`^\[` + th + `\] claude: ok: .*hello ` + th + `$`)
		h.expect(`^\[` + th + `\] — ✓`)
		testkit.WaitFor(t, waitTimeout, "session "+th+" idle", func() bool { return h.idleHeld(th) })
	}
	// A third thread: bob's least recently used idle session (a) gives
	// its slot back; the new one runs (and stays busy).
	h.say("/thread c")
	h.say("/as bob slow c")
	h.api.WaitRequests(3, waitTimeout)
	testkit.WaitFor(t, waitTimeout, "bob's idle session a to be stopped", func() bool { return !h.held("a") })
	if !h.held("b") || !h.held("c") {
		t.Errorf("b held %v, c held %v; want both", h.held("b"), h.held("c"))
	}
	// b busy too: nothing of bob's is idle now.
	h.say("/thread b")
	h.say("/as bob slow b")
	h.api.WaitRequests(4, waitTimeout)
	if n := h.b.slots.userThreads("bob"); n != 2 {
		t.Errorf("bob has %d threads counted, want 2", n)
	}

	h.say("/thread d")
	h.say("/as bob hello d")
	h.expect(`^\[d\] \* \(to bob\) Not taken: you have 2 Claude sessions running or waiting, the most one person may have`)
	mark := len(h.out.Lines())
	h.say("/thread e")
	h.say("/as bob hello e")
	h.say("/as bob hello again e")
	testkit.WaitFor(t, waitTimeout, "three audited refusals", func() bool { return h.refusals("bob") == 3 })
	h.absent(mark, `Not taken`) // within the minute: silent
	if h.held("d") || h.held("e") {
		t.Error("a refused thread holds a slot")
	}

	// The operator (an admin) is not limited.
	for _, th := range []string{"f", "g", "k"} {
		h.say("/thread " + th)
		h.say("hello " + th)
		h.expect(`^\[` + th + `\] claude: ok: .*hello ` + th + `$`)
	}

	// A minute later bob is told again.
	skew.Add(int64(61 * time.Second))
	h.say("/thread m")
	h.say("/as bob hello m")
	h.expect(`^\[m\] \* \(to bob\) Not taken: you have 2 Claude sessions`)
	if n := h.count(`Not taken`); n != 2 {
		t.Errorf("%d refusal notes, want 2", n)
	}
	if n := h.count(`claude: ok: .*hello [dem]$`); n != 0 {
		t.Errorf("a refused message reached Claude (%d)", n)
	}

	// Once a session of bob's ends its turn, bob may go on (evicting it).
	release()
	for _, th := range []string{"b", "c"} {
		testkit.WaitFor(t, waitTimeout, "session "+th+" idle", func() bool { return h.idleHeld(th) })
	}
	h.say("/thread d")
	h.say("/as bob hello d")
	h.expect(`^\[d\] claude: ok: .*hello d$`)
}

// The flood: one user opening many threads while every session is
// busy gets one "all sessions busy" notice, not one per thread.
func TestConsoleOneQueueNoticePerUser(t *testing.T) {
	const threads = 200
	hold, _ := holdRelease(t)
	h := newHarness(t, script(hold), func(c *testConfig) {
		c.MaxSessions = 2
		c.MaxThreadsPerUser = 1000 // this test is about the notices
	})
	for i := range threads {
		h.say(fmt.Sprintf("/thread t%d", i))
		h.say(fmt.Sprintf("/as bob slow %d", i))
	}
	testkit.WaitFor(t, waitTimeout, "bob's threads to queue", func() bool { return h.b.slots.queued() == threads-2 })
	h.api.WaitRequests(2, waitTimeout)
	busy := `\* All 2 Claude sessions are busy; this thread is waiting`
	if n := h.count(busy); n != 1 {
		t.Errorf("%d queue notices for %d waiting threads of one user, want 1", n, threads-2)
	}
	// Another user waiting is told once too.
	h.say("/thread op")
	h.say("hello op")
	h.expect(`^\[op\] ` + busy + ` \(position 199 in the queue\)`)
	testkit.WaitFor(t, waitTimeout, "the operator's thread to queue", func() bool { return h.b.slots.queued() == threads-1 })
	if n := h.count(busy); n != 2 {
		t.Errorf("%d queue notices for two users, want 2", n)
	}
}

// CLAUDEOPS_MAX_SCHEDULES_PER_USER counts a user's schedules across the
// bot; admins are exempt.
func TestConsoleSchedulesPerUser(t *testing.T) {
	h := newHarness(t, script(nil), func(c *testConfig) { c.MaxSchedulesPerUser = 2 })
	stop := startSchedulerWith(t, h, scheduler.Config{})
	defer stop()
	h.say(`/as bob schedule add "0 2 * * *" one`)
	h.expect(`\* Schedule \d+: `)
	h.say("/thread elsewhere")
	h.say(`/as bob schedule add "0 3 * * *" two`)
	h.expect(`\* Schedule \d+: `)
	h.say(`/as bob schedule add "0 4 * * *" three`)
	h.expect(`^\[elsewhere\] \* Not scheduled: you already have 2 schedules, the limit per user \(CLAUDEOPS_MAX_SCHEDULES_PER_USER=2\)`)
	for i := range 3 {
		h.say(fmt.Sprintf(`schedule add "0 %d * * *" admin %d`, i+5, i))
		h.expect(`\* Schedule \d+: .* admin ` + fmt.Sprint(i) + `$`)
	}
	all, err := h.st.ListSchedules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, s := range all {
		by[s.CreatedBy]++
	}
	if by["bob"] != 2 || by["operator"] != 3 {
		t.Errorf("schedules by user: %v, want bob 2, operator 3", by)
	}
}

// CLAUDEOPS_SCHEDULE_MIN_INTERVAL (default 5m) holds for everyone, at add
// time and for a row stored past it; and the scenario: three
// `schedule add "@every 1s"` by a non-admin make no run.
func TestConsoleScheduleMinInterval(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	// A row written without the check (another process, a hand edit).
	ctx := context.Background()
	now := time.Now()
	rowID, err := h.st.AddSchedule(ctx, store.Schedule{Spec: "@every 1s", Prompt: "sneaky", Platform: "console", Channel: "console",
		Overlap: "skip", ApprovalPolicy: "deny", Timeout: time.Minute, CatchUp: time.Hour, CreatedBy: "bob", CreatedAt: now, UpdatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	stop := startSchedulerWith(t, h, scheduler.Config{}) // the defaults
	defer stop()
	for range 3 {
		h.say(`/as bob schedule add "@every 1s" flood`)
		h.expect(`\* Not scheduled: .*"@every 1s" runs every 1s, more often than the minimum interval of 5m \(CLAUDEOPS_SCHEDULE_MIN_INTERVAL\)`)
	}
	h.say(`schedule add "*/1 * * * *" admins too`)
	h.expect(`\* Not scheduled: .*can run 1m apart .*minimum interval of 5m`)
	h.say(`/as bob schedule add "0 2 * * *" nightly`)
	id := h.expect(`\* Schedule (\d+): ` + "`0 2 \\* \\* \\*`" + ` — nightly$`)[1]
	h.say("schedule list")
	h.expect(fmt.Sprintf(`%d\. `+"`@every 1s`"+` — sneaky · by bob \(not running: .*minimum interval of 5m`, rowID))
	h.expect(id + `\. ` + "`0 2 \\* \\* \\*`" + ` — nightly · by bob · next `)
	h.say(fmt.Sprintf("schedule run %d", rowID))
	h.expect(fmt.Sprintf(`Could not run schedule %d: .*minimum interval of 5m`, rowID))
	h.say(fmt.Sprintf("schedule pause %d", rowID))
	h.expect(fmt.Sprintf(`Schedule %d paused\.`, rowID))
	h.say(fmt.Sprintf("schedule resume %d", rowID))
	h.expect(fmt.Sprintf(`Could not resume schedule %d: .*minimum interval of 5m`, rowID))

	// Nothing runs: give a 1s schedule a few seconds to show itself.
	time.Sleep(3 * time.Second)
	all, err := h.st.ListSchedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Errorf("%d schedules stored, want 2 (the row and the nightly one)", len(all))
	}
	for _, s := range all {
		if runs, err := h.st.Runs(ctx, s.ID, 0); err != nil || len(runs) != 0 {
			t.Errorf("schedule %d (%s): %d runs (%v), want none", s.ID, s.Spec, len(runs), err)
		}
	}
	for _, l := range h.out.Lines() {
		if strings.Contains(l, "Scheduled run") {
			t.Errorf("a run happened: %q", l)
		}
	}
}

// The attack with the default quotas: one non-admin opening 200
// threads while every session is busy. Two run, one waits, and the rest are
// refused: bob hears of it twice in all (one queue notice, one refusal
// note), whatever the number of threads; every refusal is audited.
func TestConsoleThreadFloodDefaults(t *testing.T) {
	const threads = 200
	hold, _ := holdRelease(t)
	h := newHarness(t, script(hold), func(c *testConfig) { c.MaxSessions = 2 })
	for i := range threads {
		h.say(fmt.Sprintf("/thread t%d", i))
		h.say(fmt.Sprintf("/as bob slow %d", i))
	}
	testkit.WaitFor(t, waitTimeout, "every refusal audited", func() bool { return h.refusals("bob") == threads-3 })
	testkit.WaitFor(t, waitTimeout, "one thread of bob's to wait", func() bool { return h.b.slots.queued() == 1 })
	h.api.WaitRequests(2, waitTimeout)
	if n := h.b.slots.userThreads("bob"); n != 3 {
		t.Errorf("bob has %d threads counted, want 3 (the default)", n)
	}
	if n := h.b.slots.live(); n != 2 {
		t.Errorf("%d live sessions, want 2", n)
	}
	testkit.WaitFor(t, waitTimeout, "the queue notice and the refusal note", func() bool {
		return h.count(`All 2 Claude sessions are busy`) > 0 && h.count(`\(to bob\) Not taken`) > 0
	})
	time.Sleep(200 * time.Millisecond) // room for any more (there should be none)
	touched := map[string]int{}        // thread: lines the bot wrote there
	for _, l := range h.out.Lines() {
		if m := regexp.MustCompile(`^\[(t\d+)\] (.*)`).FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[2], "claude:") && !strings.HasPrefix(m[2], "* switched to thread") {
			touched[m[1]]++
		}
	}
	if n := h.count(`All 2 Claude sessions are busy`); n != 1 {
		t.Errorf("%d queue notices, want 1", n)
	}
	if n := h.count(`\(to bob\) Not taken`); n != 1 {
		t.Errorf("%d refusal notes, want 1", n)
	}
	if len(touched) > 4 {
		t.Errorf("the bot wrote in %d of bob's threads (%v), want at most 4: two running, one waiting, one refused", len(touched), touched)
	}
	// A refused mention leaves no thread behind (issue 24: each stored one).
	rows, err := h.b.store.ListThreads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) > 3 {
		t.Errorf("%d threads stored after %d mentions of which %d were refused, want at most 3 (those given a session)", len(rows), threads, threads-3)
	}
	t.Logf("bot lines (not Claude's) by thread: %v", touched)
}

// Issue 12: a slot won by evicting an idle session is taken silently (no
// "all sessions are busy", then "a session is free" 50 ms later); a thread
// that waits on a busy session is told, and told when it goes on.
func TestConsoleQueueNoticeOnlyWhenBusy(t *testing.T) {
	hold, release := holdRelease(t)
	h := newHarness(t, script(hold), func(c *testConfig) { c.MaxSessions = 1 })
	const busy, free = `Claude sessions? (are|is) busy`, `A Claude session is free`

	h.say("/thread a")
	h.say("hello a")
	h.expect(`^\[a\] claude: ok: .*hello a$`)
	h.expect(`^\[a\] — ✓`)
	testkit.WaitFor(t, waitTimeout, "session a idle", func() bool { return h.idleHeld("a") })

	// b takes a's slot (a is idle), and a takes it back from idle b.
	mark := len(h.out.Lines())
	h.say("/thread b")
	h.say("hello b")
	h.expect(`^\[b\] claude: ok: .*hello b$`)
	h.expect(`^\[b\] — ✓`)
	if h.held("a") {
		t.Error("a still holds a slot over the cap of 1")
	}
	testkit.WaitFor(t, waitTimeout, "session b idle", func() bool { return h.idleHeld("b") })
	h.say("/thread a")
	h.say("slow a")
	h.api.WaitRequests(3, waitTimeout)
	testkit.WaitFor(t, waitTimeout, "a to hold the slot", func() bool { return h.held("a") && !h.held("b") })
	h.absent(mark, busy)
	h.absent(mark, free)

	// a is in a slow turn: b has to wait, and is told.
	h.say("/thread b")
	h.say("hello again b")
	h.expect(`^\[b\] \* All 1 Claude sessions are busy; this thread is waiting \(position 1 in the queue\)\.`)
	release()
	h.expect(`^\[b\] \* ` + free + `; going on\.$`)
	h.expect(`^\[b\] claude: ok: .*hello again b$`)
	if n := h.count(busy); n != 1 {
		t.Errorf("%d busy notices, want 1", n)
	}
}
