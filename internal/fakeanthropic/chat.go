package fakeanthropic

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// ChatScript is the model the chat adapters' end-to-end tests talk to. The
// last line of the user's text picks the answer:
//
//   - after a tool ran: "tool result: <its output>";
//   - "run <cmd>": a Bash call of cmd (which needs approval);
//   - "ask one" / "ask many" / "ask multi": an AskUserQuestion (3 options,
//     6 options, 3 options multi-select) asking "Which one?"; "ask two" asks
//     "Which one?" (Red, Blue, Green) and "How many?" (One, Two);
//   - "slow…": a text that stops after its first delta until hold closes;
//   - "long [n]": LongAnswer(n) (default 60 000) streamed fast;
//   - "stream <n>": LongAnswer(n) at a model's pace (40 characters / 20 ms);
//   - anything else: "ok: <all the user text>" (lines joined by " / ").
func ChatScript(hold <-chan struct{}) Script {
	return func(ctx context.Context, req *Request) Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return TextReply("tool result: " + trs[0].Content)
		}
		all := req.LastUserText()
		last := all
		if i := strings.LastIndex(all, "\n"); i >= 0 {
			last = all[i+1:]
		}
		size := func(prefix string, def int) int {
			if n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(last, prefix))); err == nil && n > 0 {
				return n
			}
			return def
		}
		switch {
		case strings.HasPrefix(last, "run "):
			return Reply{Blocks: []Block{ToolUse("Bash", map[string]string{"command": strings.TrimPrefix(last, "run ")})}}
		case last == "ask one":
			return Reply{Blocks: []Block{ToolUse("AskUserQuestion", Question(false, "Red", "Blue", "Green"))}}
		case last == "ask many":
			return Reply{Blocks: []Block{ToolUse("AskUserQuestion", Question(false, "a1", "a2", "a3", "a4", "a5", "a6"))}}
		case last == "ask two":
			q := Question(false, "Red", "Blue", "Green")
			q2 := Question(false, "One", "Two")["questions"].([]map[string]any)[0]
			q2["question"], q2["header"] = "How many?", "Count"
			q["questions"] = append(q["questions"].([]map[string]any), q2)
			return Reply{Blocks: []Block{ToolUse("AskUserQuestion", q)}}
		case last == "ask multi":
			return Reply{Blocks: []Block{ToolUse("AskUserQuestion", Question(true, "Logging", "Metrics", "Tracing"))}}
		case strings.HasPrefix(last, "slow"):
			return Reply{Blocks: []Block{Text("slow answer that takes a while " + strings.Repeat("more ", 20))}, Hold: hold, ChunkSize: 10}
		case strings.HasPrefix(last, "long"):
			// Streamed over ~1.5 s for 60 000 characters, so that the live
			// message is edited (or streamed) many times before it is complete.
			return Reply{Blocks: []Block{Text(LongAnswer(size("long", 60000)))}, ChunkSize: 200, ChunkDelay: 5 * time.Millisecond}
		case strings.HasPrefix(last, "stream "):
			return Reply{Blocks: []Block{Text(LongAnswer(size("stream", 6000)))}, ChunkSize: 40, ChunkDelay: 20 * time.Millisecond}
		}
		return TextReply("ok: " + strings.ReplaceAll(all, "\n", " / "))
	}
}

// TextReply is a reply of one text block.
func TextReply(s string) Reply { return Reply{Blocks: []Block{Text(s)}} }

// Question is AskUserQuestion's input: one question "Which one?" with the
// given option labels.
func Question(multi bool, labels ...string) map[string]any {
	var opts []map[string]string
	for _, l := range labels {
		opts = append(opts, map[string]string{"label": l, "description": "option " + l})
	}
	return map[string]any{"questions": []map[string]any{{"question": "Which one?", "header": "Pick", "multiSelect": multi, "options": opts}}}
}

// LongAnswer is Markdown of n bytes with paragraphs and code blocks.
func LongAnswer(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i%7 == 3 {
			b.WriteString("```go\nfunc f() int { return 42 } // line ")
			b.WriteString(strings.Repeat("x", i%50))
			b.WriteString("\n```\n\n")
			continue
		}
		b.WriteString("Paragraph with **bold** and `code` and é ✓ number ")
		b.WriteString(strings.Repeat("word ", 30))
		b.WriteString("\n\n")
	}
	return strings.ToValidUTF8(b.String()[:n], "") // never half a rune
}
