package slack_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
	"github.com/claudeops/claudeops/internal/testcli"
	"github.com/claudeops/claudeops/internal/testkit"
	"github.com/claudeops/claudeops/internal/testrunner"
	"github.com/claudeops/claudeops/store"
)

// The catch-up tests run the bot several times on one database file, one
// fake Slack and one model API: a run is stopped, people go on posting,
// Slack gives up on delivering, and the next run catches up.

// otherBot is another app in the workspace.
var otherBot = fakeslack.OtherBot{BotID: "B0OTHER001", UserID: "U0OTHERBOT", AppID: "A0OTHER001", Name: "otherbot"}

type catchUpEnv struct {
	t      *testing.T
	fs     *fakeslack.Server
	api    *fakeanthropic.Server
	db     string
	dir    string
	home   string
	window time.Duration
	clock  *testkit.Clock // nil: real time; else the time of the bot, the adapter and the fake's message ts alike
	http   bool           // HTTP mode instead of Socket Mode
	front  atomic.Pointer[http.Handler]
	mod    func(*bot.Config, *slack.Config)
	logs   logLines    // the adapter's log, over every run
	run    *catchUpRun // the run going on, if any
}

// refusals is how many times user was told, privately, that they may not
// use the bot, and how many refusals of them the bot's audit log holds.
func (e *catchUpEnv) refusals(user string) (told, audited int) {
	e.t.Helper()
	for _, m := range e.fs.Ephemerals(general, user) {
		if strings.Contains(m.VisibleText(), "not allowed to use this bot") {
			told++
		}
	}
	log, err := e.run.st.AuditLog(context.Background(), "", 0)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, a := range log {
		if a.UserID == user && a.Action == "refused" && !a.Allowed {
			audited++
		}
	}
	return told, audited
}

// refusedTimes checks that user was refused n times so far: told and
// audited each time.
func (e *catchUpEnv) refusedTimes(user string, n int) {
	e.t.Helper()
	e.fs.WaitFor(wait, func() bool { told, audited := e.refusals(user); return told >= n && audited >= n })
	if told, audited := e.refusals(user); told != n || audited != n {
		e.t.Fatalf("%s told %d times they may not use the bot and %d refusals audited, want %d", user, told, audited, n)
	}
}

// logLines keeps log records' messages.
type logLines struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }

func (l *logLines) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// waitLog waits until the adapter has logged msg n times.
func (e *catchUpEnv) waitLog(msg string, n int) {
	e.t.Helper()
	if !e.fs.WaitFor(wait, func() bool { return e.logs.count(msg) >= n }) {
		e.t.Fatalf("the adapter logged %q %d times, want %d", msg, e.logs.count(msg), n)
	}
}

// newCatchUpEnv starts the fakes; fo.Clock is set from clock when given.
func newCatchUpEnv(t *testing.T, fo fakeslack.Options, hold <-chan struct{}, window time.Duration, clock *testkit.Clock, httpMode bool) *catchUpEnv {
	t.Helper()
	e := &catchUpEnv{t: t, dir: t.TempDir(), home: t.TempDir(), window: window, clock: clock, http: httpMode,
		db: filepath.Join(t.TempDir(), "db")}
	if clock != nil {
		fo.Clock = clock.Now
	}
	if httpMode {
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := e.front.Load()
			if h == nil {
				http.Error(w, "the bot is down", http.StatusBadGateway) // a proxy with nothing behind
				return
			}
			(*h).ServeHTTP(w, r)
		}))
		t.Cleanup(front.Close)
		fo.EventsURL, fo.InteractivityURL, fo.CommandsURL = front.URL, front.URL, front.URL
	}
	e.fs = fakeslack.Start(t, fo)
	e.api = fakeanthropic.Start(t, script(hold))
	return e
}

// catchUpRun is one run of the bot.
type catchUpRun struct {
	st   *store.Store
	ad   *slack.Adapter
	stop func()
}

// start runs the bot on the environment's database until stop (or the
// test's end).
func (e *catchUpEnv) start() *catchUpRun {
	t := e.t
	t.Helper()
	st, err := store.Open(context.Background(), e.db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now
	if e.clock != nil {
		now = e.clock.Now
	}
	bc := bot.Config{
		Runner:       testrunner.Runner(t, e.home),
		ClaudeBin:    testcli.Bin(t),
		Env:          testkit.CLIEnv(e.home, e.api.URL, "CLAUDE_CODE_MAX_RETRIES=1"),
		Workdir:      e.dir,
		AllowedUsers: []string{alice, bob},
		MaxSessions:  4,
		StopGrace:    3 * time.Second,
		Now:          now,
	}
	sc := slack.Config{
		BotToken: e.fs.Opts.BotToken, APIURL: e.fs.URL + "/api/", EditInterval: 200 * time.Millisecond,
		RateScale: e.fs.Opts.RateScale, CatchUp: e.window, Now: now, Logger: slog.New(&e.logs),
	}
	if e.http {
		sc.SigningSecret = e.fs.Opts.SigningSecret
	} else {
		sc.AppToken = e.fs.Opts.AppToken
	}
	if e.mod != nil {
		e.mod(&bc, &sc)
	}
	ad, err := slack.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	b := bot.New(bc, st)
	b.AddAdapter(ad)
	ad.SetCatchUpState(storeState{st}, func(channel, user string) bool { return b.MayUse(slack.Platform, channel, user) })
	if err := b.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.http {
		h := ad.HTTPHandler()
		e.front.Store(&h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = b.Run(ctx) }()
	go func() { defer wg.Done(); _ = ad.Run(ctx, b.Deliver) }()
	var once sync.Once
	r := &catchUpRun{st: st, ad: ad}
	r.stop = func() {
		once.Do(func() {
			e.front.Store(nil)
			cancel()
			wg.Wait()
			ad.Close()
			st.Close()
		})
	}
	t.Cleanup(r.stop)
	if !e.http && !e.fs.WaitConnections(1, wait) {
		t.Fatal("the adapter did not connect over Socket Mode")
	}
	return r
}

// botSays waits until the thread holds a bot message matching pattern.
func (e *catchUpEnv) botSays(threadTS, pattern string) fakeslack.Message {
	e.t.Helper()
	re := regexp.MustCompile(pattern)
	var found fakeslack.Message
	if !e.fs.WaitFor(wait, func() bool {
		for _, m := range e.fs.Thread(general, threadTS) {
			if m.BotID == e.fs.Opts.BotID && re.MatchString(m.VisibleText()) {
				found = m
				return true
			}
		}
		return false
	}) {
		e.t.Fatalf("no bot message matching %q in thread %s:\n%s", pattern, threadTS, e.dump(threadTS))
	}
	return found
}

// count is how many bot messages of the thread match pattern.
func (e *catchUpEnv) count(threadTS, pattern string) int {
	re := regexp.MustCompile(pattern)
	n := 0
	for _, m := range e.fs.Thread(general, threadTS) {
		if m.BotID == e.fs.Opts.BotID && re.MatchString(m.VisibleText()) {
			n++
		}
	}
	return n
}

func (e *catchUpEnv) dump(threadTS string) string {
	var b strings.Builder
	for _, m := range e.fs.Thread(general, threadTS) {
		who := m.User
		if m.BotID != "" {
			who = "bot " + m.BotID
		}
		b.WriteString("  [" + who + " " + m.TS + "] " + strings.ReplaceAll(m.VisibleText(), "\n", " ⏎ ") + "\n")
	}
	return b.String()
}

// prompts are the texts the model was asked about, in order (one per
// request: what was typed since the model's last answer).
func (e *catchUpEnv) prompts() []string {
	var out []string
	for _, r := range e.api.Requests() {
		if !r.IsProbe() {
			out = append(out, r.LastUserText())
		}
	}
	return out
}

// asked is how many of the model's requests carry text as typed.
func (e *catchUpEnv) asked(text string) int {
	n := 0
	for _, p := range e.prompts() {
		if strings.Contains(p, text) {
			n++
		}
	}
	return n
}

// waitAsked waits until the model has been asked about every text.
func (e *catchUpEnv) waitAsked(texts ...string) {
	e.t.Helper()
	if !e.fs.WaitFor(wait, func() bool {
		for _, tx := range texts {
			if e.asked(tx) == 0 {
				return false
			}
		}
		return true
	}) {
		e.t.Fatalf("the model was not asked about all of %q; it was asked:\n  %s", texts, strings.Join(e.prompts(), "\n  "))
	}
}

// askedInOrder checks that each text reached the model exactly once, and
// in this order (within one request too: the CLI merges queued messages).
func (e *catchUpEnv) askedInOrder(texts ...string) {
	e.t.Helper()
	prompts := e.prompts()
	at := func(text string) (req, pos int) {
		for i, p := range prompts {
			if j := strings.Index(p, text); j >= 0 {
				return i, j
			}
		}
		return -1, -1
	}
	prevReq, prevPos := -1, -1
	for _, tx := range texts {
		if n := e.asked(tx); n != 1 {
			e.t.Errorf("%q reached the model %d times, want once; prompts:\n  %s", tx, n, strings.Join(prompts, "\n  "))
			continue
		}
		req, pos := at(tx)
		if req < prevReq || (req == prevReq && pos < prevPos) {
			e.t.Errorf("%q reached the model out of order; prompts:\n  %s", tx, strings.Join(prompts, "\n  "))
		}
		prevReq, prevPos = req, pos
	}
}

// neverAsked checks that no text reached the model.
func (e *catchUpEnv) neverAsked(texts ...string) {
	e.t.Helper()
	for _, tx := range texts {
		if n := e.asked(tx); n != 0 {
			e.t.Errorf("%q reached the model %d times; it must not", tx, n)
		}
	}
}

// repliesRead is the thread roots conversations.replies was called for.
func (e *catchUpEnv) repliesRead() map[string]int {
	out := map[string]int{}
	for _, c := range e.fs.Calls("conversations.replies") {
		out[c.Param("ts")]++
	}
	return out
}

// noViolations: nothing the app did would Slack reject; want are the
// violations expected (substrings), each at least once.
func (e *catchUpEnv) noViolations(want ...string) {
	e.t.Helper()
	seen := map[string]bool{}
outer:
	for _, v := range e.fs.Violations() {
		for _, w := range want {
			if strings.Contains(v, w) {
				seen[w] = true
				continue outer
			}
		}
		e.t.Errorf("Slack violation: %s", v)
	}
	for _, w := range want {
		if !seen[w] {
			e.t.Errorf("no violation %q", w)
		}
	}
}

// storeState is what cmd/claudeops gives the adapter (slackstate.go), over
// the same store methods: catch-up reads the bot's real records.
type storeState struct{ st *store.Store }

func (s storeState) ActiveThreads(ctx context.Context, since time.Time) ([]slack.ActiveThread, error) {
	ts, err := s.st.ThreadsActiveSince(ctx, slack.Platform, since)
	var out []slack.ActiveThread
	for _, t := range ts {
		out = append(out, slack.ActiveThread{Channel: t.Channel, ThreadTS: t.ThreadID, LastActive: t.LastActivity})
	}
	return out, err
}

func (s storeState) Handled(ctx context.Context, team, channel, afterTS string) ([]slack.HandledMessage, error) {
	prefix := team + "/" + channel
	ms, err := s.st.ReceivedBetween(ctx, slack.Platform, prefix+"/"+afterTS, prefix+"0")
	var out []slack.HandledMessage
	for _, m := range ms {
		ref, _ := adapters.ThreadKey(m.ThreadKey).Ref()
		out = append(out, slack.HandledMessage{ID: m.Key, ThreadTS: ref.Thread, ReceivedAt: m.ReceivedAt})
	}
	return out, err
}

func (s storeState) Position(ctx context.Context, key string) (string, error) {
	c, err := s.st.SyncCursor(ctx, slack.Platform, "catch-up/"+key)
	return c.NextBatch, err
}

func (s storeState) SavePosition(ctx context.Context, key, ts string, at time.Time) error {
	return s.st.SaveSyncCursor(ctx, slack.Platform, "catch-up/"+key, store.SyncCursor{NextBatch: ts}, at)
}

func (s storeState) ForgetPositions(ctx context.Context, cutoff time.Time) error {
	_, err := s.st.DeleteSyncCursorsBefore(ctx, slack.Platform, "catch-up/", cutoff)
	return err
}
