package console

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// clock is a console clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// screen drives one console adapter's output side.
type screen struct {
	t   *testing.T
	a   *Adapter
	clk *clock
	out *bytes.Buffer
}

func newScreen(t *testing.T) *screen {
	clk := newClock()
	out := &bytes.Buffer{}
	return &screen{t: t, clk: clk, out: out, a: New(Options{In: strings.NewReader(""), Out: out, Now: clk.now})}
}

var (
	mainT  = Thread("main")
	otherT = Thread("other")
	ctx    = context.Background()
)

func (s *screen) post(th adapters.ThreadRef, m adapters.Message) adapters.MessageRef {
	s.t.Helper()
	ref, err := s.a.Post(ctx, th, m)
	if err != nil {
		s.t.Fatal(err)
	}
	return ref
}

func (s *screen) edit(ref adapters.MessageRef, m adapters.Message) {
	s.t.Helper()
	if err := s.a.Edit(ctx, ref, m); err != nil {
		s.t.Fatal(err)
	}
}

func (s *screen) ask(th adapters.ThreadRef, p adapters.Prompt) adapters.MessageRef {
	s.t.Helper()
	ref, err := s.a.Ask(ctx, th, p)
	if err != nil {
		s.t.Fatal(err)
	}
	return ref
}

func text(s string) adapters.Message { return adapters.Message{Kind: adapters.KindText, Text: s} }
func final(s string) adapters.Message {
	return adapters.Message{Kind: adapters.KindText, Text: s, Final: true}
}
func tool(t adapters.Tool) adapters.Message {
	return adapters.Message{Kind: adapters.KindTool, Tool: &t}
}

// TestRender shows, for each kind of message, what the console prints for a
// sequence of posts and edits. The expected screens are in testdata/*.golden
// (go test -update rewrites them).
func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(s *screen)
	}{
		{"streaming-text", func(s *screen) {
			// Only whole lines are printed while text streams; the rest
			// when it is final.
			ref := s.post(mainT, text("Hel"))
			s.edit(ref, text("Hello"))
			s.edit(ref, text("Hello, world.\nSecond li"))
			s.edit(ref, text("Hello, world.\nSecond line.\n\nFourth"))
			s.edit(ref, text("Hello, world.\nSecond line.\n\nFourth"))
			s.edit(ref, final("Hello, world.\nSecond line.\n\nFourth line, the end."))
		}},
		{"text-final-at-once", func(s *screen) {
			s.post(mainT, final("# Title\n\n- one\n- two\n"))
			s.post(mainT, final("no newline at all"))
		}},
		{"text-ends-with-newline", func(s *screen) {
			ref := s.post(mainT, text("first\n"))
			s.edit(ref, final("first\n"))
			ref = s.post(mainT, text(""))
			s.edit(ref, final(""))
		}},
		{"text-rewritten", func(s *screen) {
			// A rewrite (not an extension) shows the text again, whole.
			ref := s.post(mainT, text("The answer is 4"))
			s.edit(ref, text("The answer is 42.\nBecause"))
			s.edit(ref, text("Sorry, the answer is 41.\n"))
			s.edit(ref, final("Sorry, the answer is 41.\nReally."))
		}},
		{"two-texts-interleaved", func(s *screen) {
			a := s.post(mainT, text("alpha one\nalpha t"))
			b := s.post(otherT, text("beta one\n"))
			s.edit(a, final("alpha one\nalpha two"))
			s.edit(b, final("beta one\nbeta two"))
		}},
		{"tool-lines", func(s *screen) {
			run := adapters.Tool{Name: "Bash", Input: "make test", State: adapters.ToolRunning}
			ref := s.post(mainT, tool(run))
			// Running edits are shown at most every 10 s.
			s.clk.advance(5 * time.Second)
			run.Elapsed = 5 * time.Second
			s.edit(ref, tool(run))
			s.clk.advance(7 * time.Second)
			run.Elapsed = 12 * time.Second
			s.edit(ref, tool(run))
			s.clk.advance(time.Second)
			run.Elapsed = 13 * time.Second
			s.edit(ref, tool(run))
			done := run
			done.State, done.Elapsed, done.Preview = adapters.ToolOK, 14200*time.Millisecond, "ok  \tgithub.com/x/y\t0.3s\nok  \tgithub.com/x/z\t0.1s"
			s.edit(ref, tool(done))

			ref = s.post(mainT, tool(adapters.Tool{Name: "Read", Input: "/etc/hosts"}))
			s.edit(ref, tool(adapters.Tool{Name: "Read", Input: "/etc/hosts", State: adapters.ToolFailed, Elapsed: 3 * time.Millisecond, Preview: "permission denied"}))
			ref = s.post(mainT, tool(adapters.Tool{Name: "Bash", Input: "rm -rf /", State: adapters.ToolRunning}))
			s.edit(ref, tool(adapters.Tool{Name: "Bash", Input: "rm -rf /", State: adapters.ToolDenied, Elapsed: 2 * time.Minute, Preview: "Denied by operator: no"}))
			// Finished at once, no preview.
			s.post(mainT, tool(adapters.Tool{Name: "Glob", Input: "*.go in /src", State: adapters.ToolOK, Elapsed: 1500 * time.Millisecond}))
			// Long previews are cut.
			s.post(mainT, tool(adapters.Tool{Name: "Bash", Input: "yes", State: adapters.ToolOK, Preview: strings.Repeat("y ", 200)}))
			// An empty input.
			s.post(mainT, tool(adapters.Tool{Name: "ListAgents", State: adapters.ToolOK, Preview: "none"}))
			// Several lines: all of them the first time, the first after.
			script := adapters.Tool{Name: "Bash", Input: "cd /src &&\n  make test &&\n  make deploy\n", State: adapters.ToolRunning}
			ref = s.post(mainT, tool(script))
			script.State, script.Elapsed, script.Preview = adapters.ToolOK, 3*time.Second, "deployed"
			s.edit(ref, tool(script))
			s.post(mainT, tool(adapters.Tool{Name: "Bash", Input: "echo one\necho two", State: adapters.ToolOK, Elapsed: time.Second, Preview: "one"}))
		}},
		{"subagent-tools-nested", func(s *screen) {
			agent := s.post(mainT, tool(adapters.Tool{Name: "Agent", Input: "Create a file via subagent", State: adapters.ToolRunning}))
			sub := s.post(mainT, tool(adapters.Tool{Name: "Bash", Input: "touch f.txt", State: adapters.ToolRunning, Depth: 1}))
			deeper := s.post(mainT, tool(adapters.Tool{Name: "Read", Input: "f.txt", State: adapters.ToolRunning, Depth: 2}))
			s.edit(deeper, tool(adapters.Tool{Name: "Read", Input: "f.txt", State: adapters.ToolOK, Depth: 2, Elapsed: time.Second}))
			s.edit(sub, tool(adapters.Tool{Name: "Bash", Input: "touch f.txt", State: adapters.ToolOK, Depth: 1, Elapsed: 2 * time.Second, Preview: "created"}))
			s.edit(agent, tool(adapters.Tool{Name: "Agent", Input: "Create a file via subagent", State: adapters.ToolOK, Elapsed: 3 * time.Second, Preview: "done"}))
		}},
		{"notices-and-footers", func(s *screen) {
			s.post(mainT, adapters.Message{Kind: adapters.KindNotice, Text: "Queued: “do the thing” (Claude takes it up when the current step ends)."})
			s.post(mainT, adapters.Message{Kind: adapters.KindNotice, Text: "State: idle\nModel: default · Mode: plan\n\nLast line", Error: false})
			s.post(mainT, adapters.Message{Kind: adapters.KindNotice, Text: "Claude API error (429 rate_limit); retrying, attempt 1 of 10 in 1.1s.", Error: true})
			s.post(mainT, adapters.Message{Kind: adapters.KindFooter, Text: "✓ 2.5s · $0.0542 · 1 turn"})
			s.post(otherT, adapters.Message{Kind: adapters.KindFooter, Text: "✗ API error 401: Invalid API key · 130ms · $0.0000 · 1 turn", Error: true})
		}},
		{"approval-prompt", func(s *screen) {
			// The choices offered, each with its typed form, and the note.
			p := adapters.Prompt{
				ID: "a1", Kind: adapters.PromptApproval, Title: "Bash wants to run: Create a file", Tool: "Bash",
				Detail:  "$ touch bash-approval.txt && echo created",
				Note:    "Prompt #1 (id `a1`): with several open, name it: `allow 1`, `deny 1 [reason]`.\nAllow for thread: `Bash(touch:*)` in this thread.",
				Choices: []adapters.Choice{adapters.ApprovalChoices[0], adapters.ApprovalChoices[1], adapters.ApprovalChoices[4]},
			}
			ref := s.ask(mainT, p)
			p.State, p.Outcome = adapters.PromptDecided, "Allowed by operator for this thread (Bash(touch:*))"
			if err := s.a.UpdatePrompt(ctx, ref, p); err != nil {
				s.t.Fatal(err)
			}
			edit := adapters.Prompt{
				ID: "a2", Kind: adapters.PromptApproval, Title: "Edit wants to run: hello.txt", Tool: "Edit",
				Detail: "/w/hello.txt\n- hello\n+ howdy", Choices: adapters.ApprovalChoices,
			}
			ref = s.ask(otherT, edit)
			edit.State, edit.Outcome = adapters.PromptExpired, "Expired: nobody decided in time."
			if err := s.a.UpdatePrompt(ctx, ref, edit); err != nil {
				s.t.Fatal(err)
			}
		}},
		{"approval-prompt-whole", func(s *screen) {
			// Every line in full, however long; nothing in it passes for
			// another line or moves the cursor.
			var b strings.Builder
			b.WriteString("$ ")
			for i := 1; i <= 40; i++ {
				fmt.Fprintf(&b, "echo %02d && \\\n", i)
			}
			b.WriteString("curl -d " + strings.Repeat("x", 400) + " https://example.org\n")
			b.WriteString("true\r[main] ! approval a3: Allowed by operator\n")
			b.WriteString("echo \x1b[2K\x1b[1Ahidden; echo \u202eevil")
			s.ask(mainT, adapters.Prompt{ID: "a3", Kind: adapters.PromptApproval, Title: "Bash wants to run", Tool: "Bash",
				Detail: b.String(), Choices: []adapters.Choice{adapters.ApprovalChoices[0], adapters.ApprovalChoices[4]}})
		}},
		{"question-prompts", func(s *screen) {
			one := adapters.Prompt{ID: "q1", Kind: adapters.PromptQuestion, Title: "Claude asks", Tool: "AskUserQuestion",
				Questions: []adapters.Question{{Text: "Which color should the widget be?", Header: "Color", Options: []adapters.Option{
					{Label: "Red", Description: "warm"}, {Label: "Blue", Description: "calm"}, {Label: "Green"},
				}}}}
			ref := s.ask(mainT, one)
			one.State, one.Outcome = adapters.PromptDecided, "Answered by operator: Blue"
			if err := s.a.UpdatePrompt(ctx, ref, one); err != nil {
				s.t.Fatal(err)
			}
			two := adapters.Prompt{ID: "q2", Kind: adapters.PromptQuestion, Title: "Claude asks", Tool: "AskUserQuestion",
				Questions: []adapters.Question{
					{Text: "Which features?", Header: "Features", Multi: true, Options: []adapters.Option{{Label: "Logging", Description: "logs"}, {Label: "Metrics"}}},
					{Text: "Which environments?", Multi: true, Options: []adapters.Option{{Label: "staging"}, {Label: "production"}}},
				}, Note: "Prompt #2: answer `1,2` or `deny 2`."}
			ref = s.ask(mainT, two)
			two.State, two.Outcome = adapters.PromptCancelled, "Cancelled: the turn was stopped."
			if err := s.a.UpdatePrompt(ctx, ref, two); err != nil {
				s.t.Fatal(err)
			}
		}},
		{"tell", func(s *screen) {
			if err := s.a.Tell(ctx, mainT, adapters.User{ID: "bob", Name: "Bob"}, "Only operator (who started this thread) or an admin can decide this."); err != nil {
				s.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScreen(t)
			tc.run(s)
			checkGolden(t, filepath.Join("testdata", tc.name+".golden"), s.out.String())
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update accepts it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// Every line printed is valid UTF-8, however a preview is cut.
func TestRenderCutsOnRuneBoundaries(t *testing.T) {
	for n := range 4 {
		s := newScreen(t)
		preview := strings.Repeat("x", n) + strings.Repeat("é€😀", 60)
		s.post(mainT, tool(adapters.Tool{Name: "Bash", Input: "cat", State: adapters.ToolOK, Preview: preview}))
		if !utf8.Valid(s.out.Bytes()) {
			t.Errorf("offset %d: invalid UTF-8 in %q", n, s.out.String())
		}
	}
}

// Posts and edits from many goroutines come out as whole lines.
func TestRenderConcurrent(t *testing.T) {
	s := newScreen(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				th := Thread(fmt.Sprintf("t%d", g))
				ref, err := s.a.Post(ctx, th, text(fmt.Sprintf("line %d of %d\n", i, g)))
				if err != nil {
					t.Error(err)
					return
				}
				if err := s.a.Edit(ctx, ref, final(fmt.Sprintf("line %d of %d\nend %d", i, g, i))); err != nil {
					t.Error(err)
				}
				s.post(th, adapters.Message{Kind: adapters.KindNotice, Text: "note"})
			}
		})
	}
	wg.Wait()
	re := regexp.MustCompile(`^\[t\d\] (claude: line \d+ of \d|claude: end \d+|\* note)$`)
	lines := strings.Split(strings.TrimSuffix(s.out.String(), "\n"), "\n")
	if len(lines) != 8*50*3 {
		t.Errorf("%d lines, want %d", len(lines), 8*50*3)
	}
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Errorf("mangled line %q", l)
		}
	}
}

// typist runs a console over a pipe and collects what it delivers.
type typist struct {
	t      *testing.T
	a      *Adapter
	in     *io.PipeWriter
	out    *syncBuffer
	events chan adapters.Event
	fail   error // what deliver returns
	done   chan error
	cancel context.CancelFunc
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startTypist(t *testing.T, o Options) *typist { return startTypistFailing(t, o, nil) }

// startTypistFailing's deliver returns fail.
func startTypistFailing(t *testing.T, o Options, fail error) *typist {
	t.Helper()
	pr, pw := io.Pipe()
	out := &syncBuffer{}
	o.In, o.Out = pr, out
	ty := &typist{t: t, a: New(o), in: pw, out: out, events: make(chan adapters.Event, 100), done: make(chan error, 1), fail: fail}
	runCtx, cancel := context.WithCancel(context.Background())
	ty.cancel = cancel
	go func() {
		ty.done <- ty.a.Run(runCtx, func(_ context.Context, ev adapters.Event) error {
			ty.events <- ev
			return ty.fail
		})
	}()
	t.Cleanup(func() {
		cancel()
		pw.Close()
	})
	return ty
}

func (ty *typist) say(lines ...string) {
	ty.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(ty.in, l+"\n"); err != nil {
			ty.t.Fatal(err)
		}
	}
}

func (ty *typist) next() adapters.Event {
	ty.t.Helper()
	select {
	case ev := <-ty.events:
		return ev
	case <-time.After(5 * time.Second):
		ty.t.Fatalf("no event; output so far:\n%s", ty.out.String())
		return adapters.Event{}
	}
}

// none checks that nothing was delivered for what was typed so far: a
// marker line typed after it is the next event.
func (ty *typist) none() {
	ty.t.Helper()
	ty.say("marker")
	if ev := ty.next(); ev.Message.Text != "marker" {
		ty.t.Errorf("delivered %+v, want nothing", ev)
	}
}

// close ends the input and waits for Run.
func (ty *typist) close() error {
	ty.t.Helper()
	ty.in.Close()
	select {
	case err := <-ty.done:
		return err
	case <-time.After(5 * time.Second):
		ty.t.Fatal("Run did not return after EOF")
		return nil
	}
}

func TestInputLinesAreMessages(t *testing.T) {
	ty := startTypist(t, Options{UserName: "Ana"})
	ty.say("hello there", "  second, with spaces around  ")
	a, b := ty.next(), ty.next()
	for i, tc := range []struct {
		got  adapters.Event
		text string
	}{{a, "hello there"}, {b, "second, with spaces around"}} {
		m := tc.got.Message
		if m == nil || tc.got.Click != nil {
			t.Fatalf("event %d is not a message: %+v", i, tc.got)
		}
		if tc.got.Thread != mainT || tc.got.User != (adapters.User{ID: OperatorID, Name: "Ana"}) || m.Text != tc.text || !m.Mentioned || len(m.Files) != 0 {
			t.Errorf("event %d:\n got %+v %+v\nwant thread %v, user %s, text %q, mentioned", i, tc.got, *m, mainT, OperatorID, tc.text)
		}
		if m.ID == "" {
			t.Errorf("event %d has no id: %+v", i, *m)
		}
	}
	if a.Message.ID == b.Message.ID {
		t.Errorf("two lines share the message id %q", a.Message.ID)
	}
	if err := ty.close(); err != nil {
		t.Errorf("Run after EOF: %v", err)
	}
}

// Message ids are the bot's dedupe key: they must differ across restarts
// of the console (a new adapter), not only within one.
func TestInputMessageIDsUniqueAcrossAdapters(t *testing.T) {
	seen := map[string]bool{}
	for range 2 {
		ty := startTypist(t, Options{}) // the real clock: a restart is later
		for i := range 50 {
			ty.say(fmt.Sprintf("line %d", i))
			id := ty.next().Message.ID
			if seen[id] {
				t.Fatalf("message id %q reused", id)
			}
			seen[id] = true
		}
		if err := ty.close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestInputThreadCommand(t *testing.T) {
	ty := startTypist(t, Options{})
	ty.say("/thread")
	ty.say("/thread deploys")
	ty.say("in deploys")
	if ev := ty.next(); ev.Thread != Thread("deploys") || ev.Message.Text != "in deploys" {
		t.Errorf("after /thread deploys: %+v", ev)
	}
	ty.say("/thread", "/thread two words", "/thread a/b", "/threads are not a command")
	if ev := ty.next(); ev.Message.Text != "/threads are not a command" || ev.Thread != Thread("deploys") {
		t.Errorf("got %+v", ev)
	}
	ty.say("/thread main", "back")
	if ev := ty.next(); ev.Thread != mainT || ev.Message.Text != "back" {
		t.Errorf("after /thread main: %+v", ev)
	}
	if err := ty.close(); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "thread-command.golden"), ty.out.String())
}

func TestInputBlankLinesIgnored(t *testing.T) {
	ty := startTypist(t, Options{})
	ty.say("", "   ", "\t")
	ty.none()
	if out := ty.out.String(); out != "" {
		t.Errorf("blank lines printed %q", out)
	}
}

func TestInputAsUser(t *testing.T) {
	t.Run("with test hooks", func(t *testing.T) {
		ty := startTypist(t, Options{TestHooks: true})
		ty.say("/as bob   allow thread  ")
		ev := ty.next()
		if ev.User != (adapters.User{ID: "bob", Name: "bob"}) || ev.Message.Text != "allow thread" || ev.Thread != mainT {
			t.Errorf("got %+v", ev)
		}
		ty.say("/as bob", "/as bob   ")
		ty.none()
	})
	t.Run("without", func(t *testing.T) {
		ty := startTypist(t, Options{})
		ty.say("/as bob allow")
		ev := ty.next()
		if ev.User.ID != OperatorID || ev.Message.Text != "/as bob allow" {
			t.Errorf("/as without test hooks: %+v", ev)
		}
	})
}

func TestInputEOF(t *testing.T) {
	ty := startTypist(t, Options{})
	select {
	case <-ty.a.InputClosed():
		t.Fatal("InputClosed before EOF")
	default:
	}
	ty.say("last words")
	ty.next()
	if err := ty.close(); err != nil {
		t.Errorf("Run returned %v at EOF, want nil", err)
	}
	select {
	case <-ty.a.InputClosed():
	default:
		t.Error("InputClosed not closed at EOF")
	}
}

func TestInputContextEnds(t *testing.T) {
	ty := startTypist(t, Options{})
	ty.cancel()
	select {
	case err := <-ty.done:
		if err != nil {
			t.Errorf("Run returned %v when ctx ended", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when ctx ended")
	}
}

func TestInputDeliverFails(t *testing.T) {
	ty := startTypistFailing(t, Options{}, errors.New("bot is shutting down"))
	ty.say("hello")
	ty.next()
	if err := ty.close(); err != nil {
		t.Fatal(err)
	}
	if got, want := ty.out.String(), "[main] * not delivered: bot is shutting down\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestInputLineTooLong(t *testing.T) {
	pr, pw := io.Pipe()
	a := New(Options{In: pr, Out: io.Discard})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, func(context.Context, adapters.Event) error { return nil }) }()
	go func() {
		_, _ = pw.Write(bytes.Repeat([]byte("x"), 2<<20))
		pw.Close()
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "read console input") {
			t.Errorf("Run returned %v, want a read error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	pr.Close()
}
