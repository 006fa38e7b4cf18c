package bot

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/testkit"
)

// TestReplayGolden: real transcripts replayed through the bot, its output
// held against testdata/render.

// recordedInput is one thing the recorded host wrote to the CLI's stdin, as
// INDEX.md lists it.
type recordedInput struct {
	Type     string                            `json:"type"`
	Message  struct{ Content json.RawMessage } `json:"message"`
	Request  struct{ Subtype string }          `json:"request"`
	Response struct {
		Response struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		} `json:"response"`
	} `json:"response"`
}

// recordedInputs reads the stdin lines of one transcript from INDEX.md.
func recordedInputs(t *testing.T, name string) []recordedInput {
	t.Helper()
	f, err := os.Open(filepath.Join(transcriptDir, "INDEX.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	in, inStdin := false, false
	var out []recordedInput
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "### ") {
			in = l == "### `"+name+".ndjson`"
			inStdin = false
			continue
		}
		if !in {
			continue
		}
		if l == "- stdin:" {
			inStdin = true
			continue
		}
		if !inStdin {
			continue
		}
		if !strings.HasPrefix(l, "  - t=") {
			if !strings.HasPrefix(l, "  ") {
				inStdin = false
			}
			continue
		}
		i, j := strings.IndexByte(l, '`'), strings.LastIndexByte(l, '`')
		if i < 0 || j <= i {
			continue // "stdin closed"
		}
		var a recordedInput
		if err := json.Unmarshal([]byte(l[i+1:j]), &a); err != nil {
			t.Fatalf("INDEX.md, %s: %v in %s", name, err, l)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		t.Fatalf("INDEX.md lists no stdin for %s", name)
	}
	return out
}

// normalizeReplay replaces what differs between runs (approval ids) by stable
// names.
func normalizeReplay(lines []string) string {
	re := regexp.MustCompile(`\b[0-9a-f]{32}\b`)
	short := regexp.MustCompile("`[0-9a-f]{6}`") // a prompt's short id, after its full id
	ids := map[string]string{}
	n := 0
	var b strings.Builder
	for _, l := range lines {
		l = re.ReplaceAllStringFunc(l, func(id string) string {
			if ids[id] == "" {
				n++
				ids[id] = fmt.Sprintf("<approval-%d>", n)
				ids[id[:6]] = fmt.Sprintf("<approval-%d-short>", n)
			}
			return ids[id]
		})
		l = short.ReplaceAllStringFunc(l, func(m string) string {
			if n := ids[m[1:7]]; n != "" {
				return "`" + n + "`"
			}
			return m
		})
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestReplayGolden replays real transcripts through the bot, acting as the
// recorded host did (the same prompts, the same decisions, "stop" where it
// interrupted), and compares what the console shows with a golden file.
func TestReplayGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		auto []int // turns the CLI starts by itself
	}{
		{name: "text"},
		{name: "long-markdown"},
		{name: "thinking"},
		{name: "parallel-tools"},
		{name: "subagent", auto: []int{1}},
		{name: "api-error-then-recover"},
		{name: "api-error-429"},
		{name: "api-error-401"},
		{name: "interrupt-streaming"},
		{name: "tool-matrix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cli := newFakeCLI(t, replaying(t, tc.name, tc.auto...))
			h := newReplayHarness(t, cli, func(c *testConfig) { c.Now = replayNow })
			actions := recordedInputs(t, tc.name)
			pop := func(kind string) recordedInput {
				t.Helper()
				for i, a := range actions {
					if a.Type == kind {
						actions = slices.Delete(actions, i, i+1)
						return a
					}
				}
				t.Fatalf("the transcript's host wrote no more %s", kind)
				return recordedInput{}
			}
			h.say(pop("user").prompt())
			typed := 1
			p := cli.proc(0)
			acted := -1
			for {
				what, seq := p.state()
				// A wait for a message the bot has not passed on yet is
				// already answered.
				stale := what == "send" && len(p.sent()) < typed
				if seq == acted || what == "" || what == "hold" || stale {
					select {
					case <-p.changed:
					case <-time.After(10 * time.Millisecond):
					}
					continue
				}
				acted = seq
				switch what {
				case "send":
					h.say(pop("user").prompt())
					typed++
				case "answer":
					a := pop("control_response").Response.Response
					if a.Behavior == "allow" {
						h.say("allow")
					} else {
						h.say(strings.TrimSpace("deny " + a.Message))
					}
				case "interrupt":
					if a := pop("control_request"); a.Request.Subtype != "interrupt" {
						t.Fatalf("unexpected control request %q", a.Request.Subtype)
					}
					h.say("stop")
				case "end":
				}
				if what == "end" {
					break
				}
			}
			waitBotIdle(t, h.b)
			got := normalizeReplay(h.out.Lines())
			testkit.Golden(t, filepath.Join("testdata", "render", tc.name+".golden"), got)
			if n := len(cli.started()); n != 1 {
				t.Errorf("%d claude processes started, want 1", n)
			}
		})
	}
}

// prompt is the first line of a recorded prompt: the console takes one line
// per message, and the replay does not depend on what was asked.
func (a recordedInput) prompt() string {
	var s string
	_ = json.Unmarshal(a.Message.Content, &s)
	l, _, _ := strings.Cut(s, "\n")
	if l == "" {
		l = "(a prompt)"
	}
	return l
}

// sentTexts are the texts sent to claude, each without the sender line the
// bot puts first; a text without one is reported as "NO SENDER LINE: …".
func sentTexts(ms []claudeproc.UserMessage) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		line, rest, _ := strings.Cut(m.Text, "\n")
		if !strings.HasPrefix(line, "[from ") || !strings.HasSuffix(line, "]") {
			out = append(out, "NO SENDER LINE: "+m.Text)
			continue
		}
		out = append(out, rest)
	}
	return out
}

func countLines(lines []string, re string) int {
	r := regexp.MustCompile(re)
	n := 0
	for _, l := range lines {
		if r.MatchString(l) {
			n++
		}
	}
	return n
}
