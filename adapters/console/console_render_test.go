package console

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/testkit"
)

// epoch is where the console tests' clocks start.
var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// screen drives one console adapter's output side.
type screen struct {
	t   *testing.T
	a   *Adapter
	clk *testkit.Clock
	out *bytes.Buffer
}

func newScreen(t *testing.T) *screen {
	clk := testkit.NewClock(epoch)
	out := &bytes.Buffer{}
	return &screen{t: t, clk: clk, out: out, a: New(Options{In: strings.NewReader(""), Out: out, Now: clk.Now})}
}

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

// renderCases is TestRender's table, kept at package level so the test
// itself stays short: each case is a sequence of posts and edits whose
// screen is compared with testdata/<name>.golden.
var renderCases = []struct {
	name string
	run  func(s *screen)
}{
	{"streaming-text", func(s *screen) {
		// What each edit adds is written at once and a line ends with
		// its newline: with nothing cutting in, the transcript is the
		// text's lines (stream_test.go has the bytes as they come).
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
		s.clk.Advance(5 * time.Second)
		run.Elapsed = 5 * time.Second
		s.edit(ref, tool(run))
		s.clk.Advance(7 * time.Second)
		run.Elapsed = 12 * time.Second
		s.edit(ref, tool(run))
		s.clk.Advance(time.Second)
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
}

// TestRender shows, for each kind of message, what the console prints for a
// sequence of posts and edits. The expected screens are in testdata/*.golden
// (go test -update rewrites them).
func TestRender(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newScreen(t)
			tc.run(s)
			testkit.Golden(t, filepath.Join("testdata", tc.name+".golden"), s.out.String())
		})
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
