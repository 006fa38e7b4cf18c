package bot

import (
	"context"
	"fmt"
	"github.com/claudeops/claudeops/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// End-to-end tests: a person at the console, the bot, the real Claude Code
// CLI and the fake model API.

func TestConsoleConversationOverSeveralTurns(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	h.say("note pineapple")
	h.expect(`^\[main\] claude: ok: note pineapple$`)
	h.expect(`^\[main\] — ✓ .* · \$0\.\d+ · 1 turn$`)
	h.say("recall")
	h.expect(`^\[main\] claude: I remember pineapple$`)
	h.expect(`^\[main\] — ✓`)
	h.say("status")
	h.expect(`^\[main\] \* State: idle, session live$`)
	h.expect(`Cost so far: \$0\.\d+ over 2 turns`)
	h.expect(`Live sessions: 1 of 4`)

	u, err := h.st.ThreadUsage(context.Background(), "console/console/main")
	if err != nil || u.Turns != 2 || u.CostUSD <= 0 {
		t.Errorf("stored usage %+v, %v", u, err)
	}
}

func TestConsoleApprovals(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	dir := h.workdir

	// Allow once.
	h.say("run touch once.txt")
	id := h.expect(`^\[main\] \? approval (\w+): Bash wants to run`)[1]
	h.expect(`^\[main\]     \$ touch once\.txt$`)
	h.expect(`reply: allow \| allow thread \| allow always \| deny \[reason\]`)
	h.say("allow")
	h.expect(`^\[main\] ! approval ` + id + `: Allowed by operator$`)
	h.expect(`✓ Bash: touch once\.txt`)
	h.expect(`— ✓`)
	if _, err := os.Stat(filepath.Join(dir, "once.txt")); err != nil {
		t.Error(err)
	}

	// Deny with a reason: the model sees it.
	h.say("run touch denied.txt")
	id = h.expect(`\? approval (\w+): Bash`)[1]
	h.say("deny Not on a Friday")
	h.expect(`! approval ` + id + `: Denied by operator: Not on a Friday$`)
	h.expect(`claude: tool result: Denied by operator: Not on a Friday`)
	if _, err := os.Stat(filepath.Join(dir, "denied.txt")); !os.IsNotExist(err) {
		t.Errorf("denied command ran: %v", err)
	}

	// Allow for thread: touch writes the file it names, so the rule is
	// that very command. It is not asked again here; another touch is.
	h.say("run touch a1.txt")
	id = h.expect(`\? approval (\w+): Bash`)[1]
	h.say("allow thread")
	h.expect(`! approval ` + id + `: Allowed by operator for this thread \(Bash\(touch a1\.txt\)\)$`)
	h.expect(`— ✓`)
	rm(t, dir, "a1.txt")
	from := h.cursor
	h.say("run touch a1.txt")
	h.expect(`✓ Bash: touch a1\.txt`)
	h.expect(`— ✓`)
	h.absent(from, `\? approval`)
	h.say("run touch a2.txt")
	id = h.expect(`\? approval (\w+): Bash`)[1]
	h.say("allow")
	h.expect(`! approval ` + id + `: Allowed by operator$`)
	h.expect(`— ✓`)

	// ... but it is asked in another thread.
	h.say("/thread other")
	h.say("run touch a1.txt")
	id = h.expect(`^\[other\] \? approval (\w+): Bash`)[1]
	// Always allow: a channel rule, persisted.
	h.say("allow always")
	h.expect(`! approval ` + id + `: Allowed by operator always in this channel \(Bash\(touch a1\.txt\)\)$`)
	h.expect(`^\[other\] — ✓`)
	rm(t, dir, "a1.txt")
	h.say("/thread third")
	from = h.cursor
	h.say("run touch a1.txt")
	h.expect(`^\[third\] ✓ Bash: touch a1\.txt`)
	h.absent(from, `\? approval`)
	h.say("rules")
	h.expect(`^\[third\] \* \d+\. allow Bash\(touch a1\.txt\) \(channel\)$`)

	for _, f := range []string{"a1.txt", "a2.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	audit, err := h.st.AuditLog(context.Background(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	decisions := 0
	for _, e := range audit {
		if e.UserID == "operator" && e.Allowed && strings.HasPrefix(e.Action, "allow") || e.Action == "deny" {
			decisions++
		}
	}
	if decisions < 4 {
		t.Errorf("audit has %d decisions: %+v", decisions, audit)
	}
}

func TestConsoleRefusedApprover(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	h.say("run touch guarded.txt")
	id := h.expect(`\? approval (\w+): Bash`)[1]
	h.say("/as bob allow")
	h.expect(`^\[main\] \* \(to bob\) Only operator \(who started this thread\) or an admin can decide this\.$`)
	h.say("/as mallory allow")
	h.expect(`\(to mallory\) You are not allowed to use this bot`)
	h.say("allow")
	h.expect(`! approval ` + id + `: Allowed by operator$`)
	h.expect(`— ✓`)
	h.say("/as bob allow")
	// No approval is open any more: "allow" decides nothing, and says so.
	h.expect(`\(to bob\) No request is waiting for a decision in this thread\.$`)

	var refused int
	audit, _ := h.st.AuditLog(context.Background(), "", 100)
	for _, e := range audit {
		if !e.Allowed && (e.UserID == "bob" || e.UserID == "mallory") {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("refused attempts audited: %d, want 2: %+v", refused, audit)
	}
}

func TestConsoleQuestions(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	h.say("ask one")
	id := h.expect(`^\[main\] \? question (\w+): \[Color\] Which color should the widget be\?$`)[1]
	h.expect(`^\[main\]     2\. Blue — calm$`)
	h.say("2")
	h.expect(`! question ` + id + `: Answered by operator: Blue$`)
	h.expect(`claude: tool result: .*"Which color should the widget be\?"="Blue"`)

	h.say("ask two")
	id = h.expect(`\? question (\w+): \(1/2\) \[Features\] Which features\?`)[1]
	h.expect(`\? question ` + id + `: \(2/2\) \[Envs\] Which environments\?`)
	h.say("3, 1")
	h.expect(`Noted “Logging, Tracing” for: Which features\?`)
	h.say("only on my laptop")
	h.expect(`! question ` + id + `: Answered by operator: Logging, Tracing; only on my laptop$`)
	h.expect(`claude: tool result: .*"Which features\?"="Logging, Tracing".*"Which environments\?"="only on my laptop"`)
}

func TestConsoleStopMidTurnAndQueuedFollowUps(t *testing.T) {
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h := newHarness(t, script(hold), nil)

	h.say("slow one")
	h.api.WaitRequests(1, waitTimeout)
	h.say("stop")
	h.expect(`\* Stopping\.`)
	h.expect(`— ■ Stopped`)
	h.say("next please")
	h.expect(`claude: ok: .*next please$`)

	// Follow-ups while a turn runs are queued, then taken up in order.
	n := len(h.api.Requests())
	h.say("slow two")
	h.api.WaitRequests(n+1, waitTimeout)
	h.say("first follow-up")
	h.expect(`\* Queued: “first follow-up”`)
	h.say("second follow-up")
	h.expect(`\* Queued: “second follow-up”`)
	release()
	h.expect(`— ✓`) // the slow turn
	h.expect(`Taken up: “first follow-up”`)
	// The CLI merges queued messages into one turn.
	h.expect(`claude: ok: .*second follow-up`)
	reqs := h.api.Requests()
	last := reqs[len(reqs)-1].LastUserText()
	if i, j := strings.Index(last, "first follow-up"), strings.Index(last, "second follow-up"); i < 0 || j < i {
		t.Errorf("follow-ups out of order: %q", last)
	}
}

func TestConsoleReapThenResume(t *testing.T) {
	h := newHarness(t, script(nil), func(c *testConfig) { c.IdleTimeout = 500 * time.Millisecond })
	h.say("note pineapple")
	h.expect(`— ✓`)
	testkit.WaitFor(t, waitTimeout, "the idle session to be reaped", func() bool { return h.b.LiveSessions() == 0 })
	h.say("recall")
	h.expect(`claude: I remember pineapple`)
}

func TestConsoleRestartExpiresApprovalAndResumes(t *testing.T) {
	h := newHarness(t, script(nil), nil)
	h.say("note pineapple")
	h.expect(`— ✓`)
	h.say("run touch never.txt")
	id := h.expect(`\? approval (\w+): Bash`)[1]
	h.restart()
	h.expect(`^\[main\] ! approval ` + id + `: Expired: the bot is shutting down\.$`)
	a, ok, err := h.st.GetApproval(context.Background(), id)
	if err != nil || !ok || a.State != "expired" {
		t.Errorf("approval after restart: %+v %v %v", a, ok, err)
	}
	h.say("allow")
	// Nothing is pending any more: "allow" decides nothing, and says so.
	h.expect(`\(to operator\) No request is waiting for a decision in this thread\.$`)
	h.say("recall")
	h.expect(`claude: I remember pineapple`)
	if _, err := os.Stat(filepath.Join(h.workdir, "never.txt")); !os.IsNotExist(err) {
		t.Errorf("expired approval ran the command: %v", err)
	}
}

func TestConsoleManyThreadsOverCap(t *testing.T) {
	const threads, maxLive = 20, 4
	// The first maxLive threads start with a slow turn held until a later
	// thread is told it waits: a thread is told only when every session is
	// busy (a slot won from an idle session says nothing).
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	t.Cleanup(release)
	h := newHarness(t, script(hold), func(c *testConfig) { c.MaxSessions = maxLive })
	var peak int
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				if n := h.b.LiveSessions(); n > peak {
					peak = n
				}
			}
		}
	}()
	for i := range threads {
		h.say(fmt.Sprintf("/thread t%02d", i))
		if i < maxLive {
			h.say("slow start")
		}
		h.say(fmt.Sprintf("hello from t%02d", i))
		h.say(fmt.Sprintf("again from t%02d", i))
	}
	start := h.cursor
	h.expect(`this thread is waiting \(position `)
	h.cursor = start
	release()
	for i := range threads {
		name := fmt.Sprintf("t%02d", i)
		start := h.cursor
		h.expect(fmt.Sprintf(`^\[%s\] claude: ok: .*hello from %s`, name, name))
		h.cursor = start
		h.expect(fmt.Sprintf(`^\[%s\] claude: ok: .*again from %s`, name, name))
		h.cursor = start
	}
	close(stop)
	<-sampled
	if peak > maxLive {
		t.Errorf("peak live sessions %d > cap %d", peak, maxLive)
	}
	waited := 0
	for _, l := range h.out.Lines() {
		if strings.Contains(l, "this thread is waiting (position ") {
			waited++
		}
	}
	if waited == 0 {
		t.Error("no thread was told it waits in the queue")
	}
	// Order within each thread: "hello" was answered before "again".
	all := h.out.Lines()
	for i := range threads {
		name := fmt.Sprintf("t%02d", i)
		hello, again := -1, -1
		for j, l := range all {
			if strings.HasPrefix(l, "["+name+"] claude: ok:") {
				if strings.Contains(l, "hello from") && hello < 0 {
					hello = j
				}
				if strings.Contains(l, "again from") && again < 0 {
					again = j
				}
			}
		}
		if hello < 0 || again < 0 || again < hello {
			t.Errorf("%s: hello at %d, again at %d", name, hello, again)
		}
	}
}

// rm removes a file the test's commands made, so that running the same
// command again shows by the file that it ran.
func rm(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}
