package console

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// TestStreamShowsWordsAsTheyCome: what an edit adds is written at once,
// before its line is complete (the oracle is the raw bytes written, not
// lines); the line is ended when its newline comes.
func TestStreamShowsWordsAsTheyCome(t *testing.T) {
	s := newScreen(t)
	steps := []struct {
		text string
		want string // everything written so far
	}{
		{"Thinking", "[main] claude: Thinking"},
		{"Thinking about it", "[main] claude: Thinking about it"},
		{"Thinking about it.\nSecond", "[main] claude: Thinking about it.\n[main] claude: Second"},
		{"Thinking about it.\nSecond line.\n", "[main] claude: Thinking about it.\n[main] claude: Second line.\n"},
	}
	ref := s.post(mainT, text(""))
	for _, st := range steps {
		s.edit(ref, text(st.text))
		if got := s.out.String(); got != st.want {
			t.Fatalf("after %q: written %q, want %q", st.text, got, st.want)
		}
	}
	s.edit(ref, final("Thinking about it.\nSecond line.\n"))
	if got, want := s.out.String(), "[main] claude: Thinking about it.\n[main] claude: Second line.\n"; got != want {
		t.Errorf("final: %q, want %q", got, want)
	}
}

// TestStreamCutLineShownAgainWhole: other output ends an open line, marked
// "…"; when the text goes on, or ends, the cut line is written again whole.
func TestStreamCutLineShownAgainWhole(t *testing.T) {
	tests := []struct {
		name string
		run  func(s *screen)
		want string
	}{
		{"cut then continued", func(s *screen) {
			ref := s.post(mainT, text("alpha be"))
			s.post(otherT, adapters.Message{Kind: adapters.KindNotice, Text: "meanwhile"})
			s.edit(ref, final("alpha beta"))
		}, "[main] claude: alpha be…\n[other] * meanwhile\n[main] claude: alpha beta\n"},
		{"cut, nothing added, then final", func(s *screen) {
			ref := s.post(mainT, text("alpha"))
			s.post(mainT, tool(adapters.Tool{Name: "Bash", Input: "ls", State: adapters.ToolRunning}))
			s.edit(ref, final("alpha"))
		}, "[main] claude: alpha…\n[main] ⚙ Bash: ls\n[main] claude: alpha\n"},
		{"cut, an edit adding nothing writes nothing", func(s *screen) {
			ref := s.post(mainT, text("alpha"))
			s.post(otherT, final("beta"))
			s.edit(ref, text("alpha"))
		}, "[main] claude: alpha…\n[other] claude: beta\n"},
		{"two texts streaming at once", func(s *screen) {
			a := s.post(mainT, text("one"))
			b := s.post(otherT, text("uno"))
			s.edit(a, text("one two"))
			s.edit(b, text("uno dos\ntres"))
			s.edit(a, final("one two\nthree"))
			s.edit(b, final("uno dos\ntres"))
		}, "[main] claude: one…\n[other] claude: uno…\n[main] claude: one two…\n[other] claude: uno dos\n[other] claude: tres…\n" +
			"[main] claude: one two\n[main] claude: three\n[other] claude: tres\n"},
		{"a rune cut short waits for its rest", func(s *screen) {
			ref := s.post(mainT, text("caf\xc3"))
			s.edit(ref, final("café"))
		}, "[main] claude: caf\u00e9\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScreen(t)
			tt.run(s)
			if got := s.out.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestStreamEveryLineShowsWhole streams texts in random pieces with other
// output cutting in at random. However it goes, each line of the text is
// written whole, in order, with its thread's name; what else shows of it
// is a start of one of its lines, marked cut.
func TestStreamEveryLineShowsWhole(t *testing.T) {
	const body = "First line of the answer.\n\nA longer second line, with words, tabs\tand marks.\n- a list\n- of items\nLast line without a newline"
	want := strings.Split(body, "\n")
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		s := newScreen(t)
		ref := s.post(mainT, text(""))
		for i := 0; i < len(body); {
			i = min(len(body), i+1+r.IntN(12))
			s.edit(ref, text(body[:i]))
			if r.IntN(4) == 0 {
				s.post(otherT, adapters.Message{Kind: adapters.KindNotice, Text: "other output"})
			}
		}
		s.edit(ref, final(body))
		k := 0
		for _, l := range strings.Split(strings.TrimSuffix(s.out.String(), "\n"), "\n") {
			if l == "[other] * other output" {
				continue
			}
			rest, ok := strings.CutPrefix(l, "[main] claude: ")
			if !ok {
				t.Fatalf("seed %d: a line that is neither the text nor the other output: %q", seed, l)
			}
			if k < len(want) && rest == expandTabs(want[k]) {
				k++
				continue
			}
			cut, ok := strings.CutSuffix(rest, "…")
			if !ok || k >= len(want) || !strings.HasPrefix(expandTabs(want[k]), cut) {
				t.Fatalf("seed %d: line %q is neither line %d of the text whole nor a start of it, cut\n%s", seed, l, k, s.out.String())
			}
		}
		if k != len(want) {
			t.Fatalf("seed %d: %d of the text's %d lines shown whole:\n%s", seed, k, len(want), s.out.String())
		}
	}
}

// expandTabs is l as the console shows it (tab stops every 8 columns from
// the start of the text).
func expandTabs(l string) string {
	var b strings.Builder
	col := 0
	for _, r := range l {
		if r == '\t' {
			n := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// TestToolWaitingForApproval: a tool waiting for a decision says so once,
// with no running time, however long it waits; once allowed, its time
// shows from the next tick; it ends as usual.
func TestToolWaitingForApproval(t *testing.T) {
	tests := []struct {
		name string
		tool string
		end  adapters.ToolState
		want string
	}{
		{"allowed, runs", "Bash", adapters.ToolOK,
			"[main] ⚙ Bash: touch a.txt\n" +
				"[main] ⏸ Bash: touch a.txt — waiting for approval\n" +
				"[main] ⚙ Bash: touch a.txt (12s)\n" +
				"[main] ✓ Bash: touch a.txt (20s) → done\n"},
		{"denied", "Bash", adapters.ToolDenied,
			"[main] ⚙ Bash: touch a.txt\n" +
				"[main] ⏸ Bash: touch a.txt — waiting for approval\n" +
				"[main] ⚙ Bash: touch a.txt (12s)\n" +
				"[main] ⊘ Bash: touch a.txt (20s) → done\n"},
		{"a question waits for an answer", "AskUserQuestion", adapters.ToolOK,
			"[main] ⚙ AskUserQuestion: touch a.txt\n" +
				"[main] ⏸ AskUserQuestion: touch a.txt — waiting for an answer\n" +
				"[main] ⚙ AskUserQuestion: touch a.txt (12s)\n" +
				"[main] ✓ AskUserQuestion: touch a.txt (20s) → done\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScreen(t)
			tl := adapters.Tool{Name: tt.tool, Input: "touch a.txt", State: adapters.ToolRunning}
			ref := s.post(mainT, tool(tl))
			tl.State = adapters.ToolWaiting
			s.edit(ref, tool(tl))
			// Waiting for minutes: edits print nothing more.
			for range 30 {
				s.clk.Advance(5 * time.Second)
				s.edit(ref, tool(tl))
			}
			// Allowed: running from now; no line until a tick is due.
			tl.State = adapters.ToolRunning
			s.edit(ref, tool(tl))
			s.clk.Advance(5 * time.Second)
			tl.Elapsed = 5 * time.Second
			s.edit(ref, tool(tl))
			s.clk.Advance(7 * time.Second)
			tl.Elapsed = 12 * time.Second
			s.edit(ref, tool(tl))
			tl.State, tl.Elapsed, tl.Preview = tt.end, 20*time.Second, "done"
			s.edit(ref, tool(tl))
			if got := s.out.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
