package slack_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testkit"
)

// picked is the notice of a thread picked up late.
const picked = `Picked up late: the bot was offline`

// TestCatchUpAfterRestart: a thread talks; the bot stops; in that thread
// alice edits what she wrote before, alice (with an edit) and bob write,
// mallory (not allowed) and another bot write, alice posts and deletes a
// message, and in the channel alice mentions the bot anew and adds a
// reply in that new thread, chats without a mention, and mallory mentions
// it (alice replying there); Slack gives up delivering all of it. The bot
// starts again on the same database: the thread's two messages, the new
// mention and its reply are answered once each, in order, each thread
// told once it was picked up late; the rest reaches nobody. Then Slack redelivers the caught-up messages' events: nothing is
// handled twice. Oracles: the model API's requests, what the fake Slack
// holds and was called with; Strict rate limits throughout.
func TestCatchUpAfterRestart(t *testing.T) {
	e := newCatchUpEnv(t, fakeslack.Options{Strict: true}, nil, 24*time.Hour, nil, false)
	run := e.start()
	e.run = run
	root := e.fs.Post(alice, general, mention+"hello there")
	e.botSays(root, `ok: hello there`)
	e.botSays(root, `✓ .* turns?$`)
	run.stop()

	// An edit of what was handled is not a new message; a message posted
	// and edited while the bot was away is taken as it reads now.
	if err := e.fs.EditMessage(alice, general, root, mention+"hello edited"); err != nil {
		t.Fatal(err)
	}
	first := e.fs.Reply(alice, general, root, "frist missde")
	if err := e.fs.EditMessage(alice, general, first, "first missed"); err != nil {
		t.Fatal(err)
	}
	e.fs.Reply(mallory, general, root, "mallory was here")
	e.fs.BotPost(otherBot, general, root, "noise from another bot")
	gone := e.fs.Reply(alice, general, root, "posted then deleted")
	if err := e.fs.DeleteMessage(alice, general, gone); err != nil {
		t.Fatal(err)
	}
	second := e.fs.Reply(bob, general, root, "second missed")
	topic := e.fs.Post(alice, general, mention+"a new topic")
	e.fs.Reply(alice, general, topic, "more on the topic")
	e.fs.Post(alice, general, "just chatting, no mention")
	refused := e.fs.Post(mallory, general, mention+"mallory wants in")
	e.fs.Reply(alice, general, refused, "alice answers mallory")
	if n := e.fs.GiveUp(); n < 11 {
		t.Fatalf("Slack gave up on %d events, want every one posted while the bot was down", n)
	}

	opened := len(e.fs.Calls("apps.connections.open"))
	e.run = e.start()
	e.botSays(root, picked)
	e.botSays(topic, picked)
	e.waitAsked("first missed", "second missed", "a new topic", "more on the topic")
	e.botSays(topic, `more on the topic`)
	e.botSays(root, `second missed`)
	// The threads' turns end (the CLI may take two messages as one turn).
	for _, th := range []struct {
		ts    string
		turns int
	}{{root, 2}, {topic, 1}} {
		if !e.fs.WaitFor(wait, func() bool {
			return e.count(th.ts, `✓ .* turns?$`) >= th.turns && !strings.Contains(e.dump(th.ts), "Stop")
		}) {
			t.Fatalf("the thread's turns did not end:\n%s", e.dump(th.ts))
		}
	}
	e.askedInOrder("hello there", "first missed", "second missed")
	e.askedInOrder("a new topic", "more on the topic")
	e.neverAsked("mallory", "noise from another bot", "posted then deleted", "just chatting", "hello edited", "frist", "alice answers mallory")
	// Nobody else was answered: mallory's mention has no thread; she is
	// refused as live (told privately, once, and audited).
	e.refusedTimes(mallory, 1)
	for _, m := range e.fs.Messages(general) {
		if m.BotID != "" {
			t.Errorf("bot posted at top level: %q", m.VisibleText())
		}
		if m.TS != root && m.TS != topic && m.TS != refused && len(e.fs.Thread(general, m.TS)) > 1 {
			t.Errorf("message %q got a thread:\n%s", m.Text, e.dump(m.TS))
		}
	}
	for _, m := range e.fs.Thread(general, refused) {
		if m.BotID != "" {
			t.Errorf("the bot answered in mallory's thread: %q", m.VisibleText())
		}
	}
	// One read per connect: a loaded machine may see Socket Mode
	// reconnect (a missed ping), and each connect catches up again.
	connects := len(e.fs.Calls("apps.connections.open")) - opened
	if n := e.repliesRead()[root]; n < 1 || n > connects {
		t.Errorf("conversations.replies of the thread: %d calls, want 1 per connect (%d)", n, connects)
	}
	if n := len(e.fs.Calls("conversations.history")); n < 1 || n > connects {
		t.Errorf("conversations.history: %d calls, want 1 per connect (%d)", n, connects)
	}

	redeliveriesIgnored(t, e, root, topic, first, second)
	e.noViolations()
}

// redeliveriesIgnored: Slack's late retries of the caught-up messages
// (first and second in the thread at root, the mention that started
// topic) are acked once the bot has looked each up, and dropped by its
// dedupe. A message posted after the acks comes behind anything they
// queued in the thread's worker: once it is answered, a duplicate would
// have reached the model.
func redeliveriesIgnored(t *testing.T, e *catchUpEnv, root, topic, first, second string) {
	t.Helper()
	var ids []string
	for _, ts := range []string{first, second, topic} {
		ids = append(ids, e.fs.EventsOf(general, ts)...)
	}
	for _, id := range ids {
		if err := e.fs.Redeliver(id); err != nil {
			t.Fatal(err)
		}
	}
	redelivered := func() (acked map[string]bool) {
		acked = map[string]bool{}
		for _, env := range e.fs.Envelopes() {
			if env.RetryAttempt > 0 && slices.Contains(ids, env.EventID) {
				acked[env.EventID] = env.Acked // the last delivery of each
			}
		}
		return acked
	}
	if !e.fs.WaitFor(wait, func() bool {
		acked := redelivered()
		for _, id := range ids {
			if !acked[id] {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the redelivered events %v were not all acked: %v", ids, redelivered())
	}
	e.fs.Reply(alice, general, root, "root sentinel")
	e.fs.Reply(alice, general, topic, "topic sentinel")
	e.waitAsked("root sentinel", "topic sentinel")
	e.askedInOrder("hello there", "first missed", "second missed", "root sentinel")
	e.askedInOrder("a new topic", "topic sentinel")
	for _, th := range []string{root, topic} {
		if n := e.count(th, picked); n != 1 {
			t.Errorf("thread %s told %d times it was picked up late, want once:\n%s", th, n, e.dump(th))
		}
	}
}

// TestCatchUpOnReconnect: Socket Mode goes down while the bot runs (a turn
// is under way). The window is an hour of the shared clock: a message
// posted in the active thread two hours before the reconnect is not picked
// up, nor one in a thread idle for longer than the window (that thread is
// not even read); messages posted later in the active thread and a new
// mention are, once the socket is back.
func TestCatchUpOnReconnect(t *testing.T) {
	hold := make(chan struct{})
	clock := testkit.RunningClock()
	e := newCatchUpEnv(t, fakeslack.Options{}, hold, time.Hour, clock, false)
	e.start()
	idle := e.fs.Post(alice, general, mention+"an old thread")
	e.botSays(idle, `ok: an old thread`)
	e.botSays(idle, `✓ .* turns?$`)

	clock.Advance(2 * time.Hour)
	active := e.fs.Post(alice, general, mention+"slow please")
	e.botSays(active, `slow answe`)
	e.fs.SetOffline(true)
	if !e.fs.WaitConnections(0, wait) {
		t.Fatal("the socket did not go")
	}
	e.fs.Reply(alice, general, active, "too old by now")
	e.fs.Reply(alice, general, idle, "in the idle thread")
	clock.Advance(2 * time.Hour)
	close(hold) // the turn ends now: the thread was active within the hour
	e.botSays(active, `✓ .* turns?$`)
	e.fs.Reply(alice, general, active, "back one")
	e.fs.Reply(bob, general, active, "back two")
	topic := e.fs.Post(bob, general, mention+"fresh topic")
	e.fs.GiveUp()
	e.fs.SetOffline(false)

	e.waitAsked("back one", "back two", "fresh topic")
	e.botSays(active, picked)
	e.botSays(topic, picked)
	e.botSays(topic, `ok: fresh topic`)
	e.askedInOrder("slow please", "back one", "back two")
	e.neverAsked("too old by now", "in the idle thread")
	if n := e.repliesRead()[idle]; n != 0 {
		t.Errorf("the idle thread was read back %d times", n)
	}
	if e.count(idle, picked) != 0 {
		t.Errorf("the idle thread was told:\n%s", e.dump(idle))
	}
	e.noViolations()
}

// TestCatchUpCapAndPaging: more was missed in a thread than catch-up picks
// up (3 here), read two messages a page: the first three are answered in
// order, the thread is told that later ones were not picked up, and the
// later ones never reach the model, nor at the next reconnect.
func TestCatchUpCapAndPaging(t *testing.T) {
	e := newCatchUpEnv(t, fakeslack.Options{}, nil, 24*time.Hour, nil, false)
	e.mod = func(_ *bot.Config, c *slack.Config) {
		c.CatchUpMax = 3
		slack.SetCatchUpPage(c, 2)
	}
	run := e.start()
	root := e.fs.Post(alice, general, mention+"hello there")
	e.botSays(root, `ok: hello there`)
	e.botSays(root, `✓ .* turns?$`)
	run.stop()
	for _, s := range []string{"missed c1", "missed c2", "missed c3", "missed c4", "missed c5"} {
		e.fs.Reply(alice, general, root, s)
	}
	e.fs.GiveUp()

	e.start()
	notice := e.botSays(root, picked)
	if !strings.Contains(notice.VisibleText(), "3 messages") || !strings.Contains(notice.VisibleText(), "later messages were not picked up") {
		t.Errorf("notice = %q", notice.VisibleText())
	}
	e.waitAsked("missed c1", "missed c2", "missed c3")
	if !e.fs.WaitFor(wait, func() bool { return !strings.Contains(e.dump(root), "Stop") && e.count(root, `✓ .* turns?$`) >= 2 }) {
		t.Fatalf("the turns did not end:\n%s", e.dump(root))
	}
	// The next connect does not pick up the rest either: once its
	// catch-up is done, a live message is answered after anything it
	// handed over.
	reads := e.repliesRead()[root]
	e.fs.Disconnect("refresh_requested")
	e.waitLog("slack: caught up", 3) // the first run's, this run's, the reconnect's
	if e.repliesRead()[root] <= reads {
		t.Errorf("the reconnect's catch-up did not read the thread")
	}
	e.fs.Reply(alice, general, root, "live again")
	e.waitAsked("live again")
	e.askedInOrder("hello there", "missed c1", "missed c2", "missed c3", "live again")
	e.neverAsked("missed c4", "missed c5")
	if n := e.count(root, picked); n != 1 {
		t.Errorf("told %d times, want once:\n%s", n, e.dump(root))
	}
	// Paged: the first catch-up read the thread in several calls.
	if n := e.repliesRead()[root]; n < 3 {
		t.Errorf("conversations.replies calls: %d, want the thread read in pages", n)
	}
	e.noViolations()
}

// TestCatchUpHTTPModeAtStart: in HTTP mode Slack's deliveries fail while
// the bot is down (its retries end with it still down); at start the bot
// reads the thread back and answers.
func TestCatchUpHTTPModeAtStart(t *testing.T) {
	e := newCatchUpEnv(t, fakeslack.Options{NoBotEcho: true}, nil, 24*time.Hour, nil, true)
	run := e.start()
	root := e.fs.Post(alice, general, mention+"hello there")
	e.botSays(root, `ok: hello there`)
	e.botSays(root, `✓ .* turns?$`)
	run.stop()
	e.fs.Reply(alice, general, root, "missed over http")
	if !e.fs.WaitFor(wait, func() bool {
		n := 0
		for _, env := range e.fs.Envelopes() {
			if env.Via == "http" && env.Status == 502 {
				n++
			}
		}
		return n == 4 // the delivery and Slack's three retries
	}) {
		t.Fatal("Slack's deliveries did not all fail")
	}
	e.start()
	e.botSays(root, picked)
	e.waitAsked("missed over http")
	e.botSays(root, `ok: missed over http`)
	e.askedInOrder("hello there", "missed over http")
	// The fake counts an event never answered as the app's fault: here it
	// is the point.
	e.noViolations("never answered 2xx")
}

// TestCatchUpRefusalsToldOnce: a person who may not use the bot mentions it
// while the bot is down, and in a thread live, before a reconnect and
// before a restart. Each mention is refused as live (told privately,
// audited), the missed one once; neither the reconnect's catch-up nor the
// next run's reads the live ones back to refuse them again. (The audit
// entry is written before the bot returns from a delivery: once a
// catch-up has logged that it is done, a repeat would be counted.)
func TestCatchUpRefusalsToldOnce(t *testing.T) {
	e := newCatchUpEnv(t, fakeslack.Options{}, nil, 24*time.Hour, nil, false)
	e.run = e.start()
	root := e.fs.Post(alice, general, mention+"hello there")
	e.botSays(root, `ok: hello there`)
	e.botSays(root, `✓ .* turns?$`)
	e.run.stop()

	e.fs.Post(mallory, general, mention+"let me in")
	e.fs.GiveUp()
	e.run = e.start()
	e.waitLog("slack: caught up", 2)
	e.refusedTimes(mallory, 1)

	// liveRefusal: mallory mentions the bot in the thread, refused live;
	// alice's mention after it is answered once its events were handled
	// (one socket, handled in order). It returns the refusals so far.
	liveRefusal := func(text, check string) int {
		t.Helper()
		e.fs.Reply(mallory, general, root, mention+text)
		th := e.fs.Post(alice, general, mention+check)
		e.botSays(th, `ok: `+check)
		told, audited := e.refusals(mallory)
		if told < 2 || told != audited {
			t.Fatalf("after %q: told %d, audited %d", text, told, audited)
		}
		return told
	}
	n := liveRefusal("let me in, live", "check one")
	e.fs.Disconnect("refresh_requested")
	e.waitLog("slack: caught up", 3)
	e.refusedTimes(mallory, n)

	n = liveRefusal("let me in, live again", "check two")
	e.run.stop()
	e.run = e.start()
	e.waitLog("slack: caught up", 4)
	e.refusedTimes(mallory, n)
	e.neverAsked("let me in")
	if e.count(root, picked) != 0 {
		t.Errorf("the thread was told it was picked up late:\n%s", e.dump(root))
	}
	e.noViolations()
}
