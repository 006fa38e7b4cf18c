package console

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/testkit"
)

// hostile is text that would drive a terminal if it reached one as it is:
// NUL, BEL, a CSI sequence clearing the screen and moving up, an OSC 8
// hyperlink (ESC ] … ESC \ and BEL-terminated), a CR that would overwrite
// the line, backspaces, DEL, C1 controls (U+009B is CSI; also a raw 0x9b
// byte, which some terminals read as CSI), NEL, bidi overrides and
// isolates, zero-width characters, a BOM, a tag character, the line
// separator, and invalid UTF-8.
const hostile = "a\x00b\x07c\x1b[2J\x1b[1Ad" +
	"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\" +
	"\x1b]0;title\x07" +
	"safe\rEVIL" +
	"abc\b\b\bxyz\x7f" +
	"\u009b31m\x9b31m\u0085" +
	"\u202eevil\u202c\u2066iso\u2069" +
	"zero\u200bwidth\u200d\ufeff\U000E0041\u00ad\u2028" +
	"\xff\xfe\xc0"

// checkTerminalSafe is the oracle: what the console wrote holds no byte a
// terminal obeys but the newline that ends each line, decodes as UTF-8,
// holds no C1 control, format character or separator, and every line
// starts with a thread's name.
func checkTerminalSafe(t *testing.T, out []byte) {
	t.Helper()
	for i, c := range out {
		if (c < 0x20 && c != '\n') || c == 0x7f {
			t.Fatalf("byte %#02x at %d reaches the terminal:\n%q", c, i, out)
		}
	}
	if !utf8.Valid(out) {
		t.Fatalf("invalid UTF-8 reaches the terminal:\n%q", out)
	}
	for _, r := range string(out) {
		if (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 {
			t.Fatalf("%U reaches the terminal:\n%q", r, out)
		}
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if !strings.HasPrefix(l, "[") {
			t.Fatalf("a line does not start with its thread's name: %q", l)
		}
	}
}

// hostileSources: every way text reaches the console's output.
var hostileSources = []struct {
	name string
	show func(s *screen, h string)
}{
	{"text final", func(s *screen, h string) { s.post(mainT, final(h)) }},
	{"text streamed rune by rune", func(s *screen, h string) {
		ref := s.post(mainT, text(""))
		for i := range h {
			s.edit(ref, text(h[:i]))
		}
		s.edit(ref, final(h))
	}},
	{"text streamed byte by byte", func(s *screen, h string) {
		ref := s.post(mainT, text(""))
		for i := 1; i <= len(h); i++ {
			s.edit(ref, text(h[:i]))
		}
		s.edit(ref, final(h))
	}},
	{"text rewritten", func(s *screen, h string) {
		ref := s.post(mainT, text("first "+h))
		s.edit(ref, final("second "+h))
	}},
	{"notice", func(s *screen, h string) { s.post(mainT, adapters.Message{Kind: adapters.KindNotice, Text: h}) }},
	{"footer", func(s *screen, h string) {
		s.post(mainT, adapters.Message{Kind: adapters.KindFooter, Text: h, Error: true})
	}},
	{"tool name, input and output", func(s *screen, h string) {
		run := adapters.Tool{Name: "Bash" + h, Input: h + "\n" + h, State: adapters.ToolRunning}
		ref := s.post(mainT, tool(run))
		run.State = adapters.ToolWaiting
		s.edit(ref, tool(run))
		run.State, run.Preview, run.Output = adapters.ToolOK, h, h
		s.edit(ref, tool(run))
	}},
	{"file name as a tool input", func(s *screen, h string) {
		s.post(mainT, tool(adapters.Tool{Name: "Read", Input: "/src/" + h + ".go", State: adapters.ToolFailed, Preview: "no such file " + h}))
	}},
	{"approval prompt", func(s *screen, h string) {
		p := adapters.Prompt{ID: "a1", Kind: adapters.PromptApproval, Title: "Bash wants to run: " + h, Tool: "Bash",
			Detail: "$ " + h, Note: h, Choices: adapters.ApprovalChoices}
		ref := s.ask(mainT, p)
		p.State, p.Outcome = adapters.PromptDecided, "Denied by operator: "+h
		if err := s.a.UpdatePrompt(ctx, ref, p); err != nil {
			s.t.Fatal(err)
		}
	}},
	{"question prompt", func(s *screen, h string) {
		s.ask(mainT, adapters.Prompt{ID: "q1", Kind: adapters.PromptQuestion, Tool: "AskUserQuestion",
			Questions: []adapters.Question{{Text: h, Header: h, Options: []adapters.Option{{Label: h, Description: h}, {Label: "b"}}}}})
	}},
	{"told", func(s *screen, h string) {
		if err := s.a.Tell(ctx, mainT, adapters.User{ID: h}, h); err != nil {
			s.t.Fatal(err)
		}
	}},
	{"thread name", func(s *screen, h string) { s.post(Thread(h), final("hello")) }},
}

// TestHostileTextShowsEscaped: whatever the source, control characters
// reach the output as escapes, never as themselves.
func TestHostileTextShowsEscaped(t *testing.T) {
	for _, src := range hostileSources {
		t.Run(src.name, func(t *testing.T) {
			s := newScreen(t)
			src.show(s, hostile)
			checkTerminalSafe(t, s.out.Bytes())
			got := s.out.String()
			for _, want := range []string{`\x1b[2J`, `\x07`, `\x00`, `safe\x0dEVIL`, `\x08`, `\x7f`, `\u009b31m`, `\x9b31m`, `\u202eevil`, `\u200b`, `\ue0041`, `\xff\xfe\xc0`} {
				if src.name != "thread name" && !strings.Contains(got, want) {
					t.Errorf("output lacks the escape %s:\n%s", want, got)
				}
			}
		})
	}
}

// Input typed back at the operator is escaped too: a refused thread name
// never switches, and an error carrying the typed text shows escaped.
func TestHostileInputEchoedEscaped(t *testing.T) {
	ty := startTypistFailing(t, Options{}, errors.New("refused: "+hostile))
	ty.say("/thread \x1b[31mred", "/thread a\u202eb", "/thread \xff")
	ty.say("hello " + hostile)
	if ev := ty.next(); ev.Thread != mainT {
		t.Errorf("a thread name with controls was taken: %+v", ev.Thread)
	}
	if err := ty.close(); err != nil {
		t.Fatal(err)
	}
	out := []byte(ty.out.String())
	checkTerminalSafe(t, out)
	if n := bytes.Count(out, []byte("* a thread name is made of visible characters only")); n != 3 {
		t.Errorf("%d refusals of a thread name, want 3:\n%s", n, out)
	}
	if !bytes.Contains(out, []byte(`* not delivered: refused: a\x00b\x07c\x1b[2J`)) {
		t.Errorf("the error is not shown escaped:\n%s", out)
	}
}

// A tab shows as spaces, to stops every 8 columns counted from the start of
// the text (after the line's prefix); CRLF ends a line like LF.
func TestTabsAndLineEndings(t *testing.T) {
	tests := []struct {
		name string
		show func(s *screen)
		want string
	}{
		{"tab stops from the line's start", func(s *screen) { s.post(mainT, final("a\tb\tc")) },
			"[main] claude: a       b       c\n"},
		{"tab in a notice", func(s *screen) { s.post(mainT, adapters.Message{Kind: adapters.KindNotice, Text: "x\ty"}) },
			"[main] * x     y\n"},
		{"CRLF in a final text", func(s *screen) { s.post(mainT, final("one\r\ntwo\r\n")) },
			"[main] claude: one\n[main] claude: two\n"},
		{"CRLF split across streamed edits", func(s *screen) {
			ref := s.post(mainT, text("one\r"))
			s.edit(ref, text("one\r\ntw"))
			s.edit(ref, final("one\r\ntwo"))
		}, "[main] claude: one\n[main] claude: two\n"},
		{"a CR that ends the text shows", func(s *screen) { s.post(mainT, final("one\r")) },
			"[main] claude: one\\x0d\n"},
		{"CRLF in a notice", func(s *screen) { s.post(mainT, adapters.Message{Kind: adapters.KindNotice, Text: "a\r\nb"}) },
			"[main] * a\n[main] * b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScreen(t)
			tt.show(s)
			if got := s.out.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			checkTerminalSafe(t, s.out.Bytes())
		})
	}
}

// FuzzTerminalSafe: no text, however streamed, gets a control byte to the
// terminal.
func FuzzTerminalSafe(f *testing.F) {
	f.Add(hostile, 3)
	f.Add("plain\ntext", 1)
	f.Add("\r\n\r\n\t\x1b", 2)
	f.Fuzz(func(t *testing.T, h string, step int) {
		if step < 1 {
			step = 1
		}
		s := &screen{t: t, clk: testkit.NewClock(epoch), out: &bytes.Buffer{}}
		s.a = New(Options{Out: s.out, Now: s.clk.Now})
		ref := s.post(mainT, text(""))
		for i := step; i < len(h); i += step {
			s.edit(ref, text(h[:i]))
			s.clk.Advance(time.Second)
		}
		s.post(otherT, adapters.Message{Kind: adapters.KindNotice, Text: h})
		s.edit(ref, final(h))
		s.post(mainT, tool(adapters.Tool{Name: h, Input: h, State: adapters.ToolOK, Preview: h}))
		if s.out.Len() > 0 && s.out.Bytes()[s.out.Len()-1] != '\n' {
			t.Errorf("output does not end with a whole line: %q", s.out.String())
		}
		checkTerminalSafe(t, s.out.Bytes())
	})
}
