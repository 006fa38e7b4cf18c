package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// TestPromptShowsTheStoredRule: for every grant a prompt offers, the rule
// its note names is exactly the rule the decision stores (issue 24), and
// what that is for a table of calls.
func TestPromptShowsTheStoredRule(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "claudeops.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := &worker{deps: deps{store: st, log: slog.New(slog.DiscardHandler)}}
	tests := []struct {
		tool, input string
		want        map[adapters.ChoiceID]string // the rule each grant shows and stores
	}{
		{"Bash", `{"command":"ls -la"}`, grants("Bash(ls:*)", "")},
		{"Bash", `{"command":"git status -s"}`, grants("Bash(git status:*)", "")},
		{"Bash", `{"command":"npm run build"}`, grants("Bash(npm run build:*)", "")},
		{"Bash", `{"command":"touch a.txt"}`, grants("Bash(touch a.txt)", "")},
		{"Bash", `{"command":"sort -o out f"}`, grants("Bash(sort -o out f)", "")},
		{"Bash", `{"command":"cp x ~/.bashrc"}`, nil},
		{"Monitor", `{"command":"tail -f x.log","timeout_ms":1000}`, grants("Monitor(tail:*)", "")},
		{"Monitor", `{"ws":{"url":"wss://x"},"timeout_ms":1000}`, nil},
		{"Write", `{"file_path":"/w/src/a.go","content":"x"}`, grants("Write(src/a.go)", "Write(src/**)")},
		{"Write", `{"file_path":"/w/.npmrc","content":"x"}`, nil},
		{"WebFetch", `{"url":"https://docs.example.com/x","prompt":"p"}`, grants("WebFetch(domain:docs.example.com)", "")},
		{"WebSearch", `{"query":"x"}`, grants("WebSearch", "")},
		{"mcp__x__y", `{}`, nil},
		{"Agent", `{"prompt":"x"}`, nil},
	}
	for i, tt := range tests {
		ps := trackedPrompt(t, i, tt.tool, json.RawMessage(tt.input))
		shown := noteRules(ps.prompt.Note)
		offered := map[adapters.ChoiceID]string{}
		for _, c := range ps.prompt.Choices {
			if c.ID == adapters.ChoiceAllow || c.ID == adapters.ChoiceDeny {
				continue
			}
			out := w.saveAllowRule(ctx, ps.grants, approvals.Decision{Choice: approvals.Choice(c.ID), By: "admin", At: time.Now()})
			rules, err := st.Rules(ctx)
			if err != nil || len(rules) == 0 {
				t.Fatalf("%s %s: %s stored nothing: %v", tt.tool, tt.input, c.ID, err)
			}
			last := rules[len(rules)-1]
			stored := approvals.Rule{Tool: last.Tool, Pattern: last.Pattern}.Spec()
			if shown[c.Label] != stored+" "+scopeWords(last.Scope) {
				t.Errorf("%s %s: %s shows %q, stores %q (%s)", tt.tool, tt.input, c.Label, shown[c.Label], stored, last.Scope)
			}
			if !strings.Contains(out, "("+stored+")") {
				t.Errorf("%s %s: %s says %q, stored %s", tt.tool, tt.input, c.Label, out, stored)
			}
			offered[c.ID] = stored
		}
		if fmt.Sprint(offered) != fmt.Sprint(tt.want) {
			t.Errorf("%s %s: grants %v, want %v", tt.tool, tt.input, offered, tt.want)
		}
	}
}

// grants is the want of a call offering Allow for thread and Always allow
// with rule, and Allow folder for thread with folder ("": none).
func grants(rule, folder string) map[adapters.ChoiceID]string {
	m := map[adapters.ChoiceID]string{adapters.ChoiceAllowThread: rule, adapters.ChoiceAllowAlways: rule}
	if folder != "" {
		m[adapters.ChoiceAllowFolder] = folder
	}
	return m
}

// trackedPrompt is the prompt an admin's thread shows for a call in /w.
func trackedPrompt(t *testing.T, i int, tool string, input json.RawMessage) *promptState {
	t.Helper()
	k := desk{
		reg: approvals.NewRegistry([]string{"admin"}, time.Hour, nil), key: "T",
		isAdmin: func(u string) bool { return u == "admin" }, now: time.Now, prompts: map[string]*promptState{},
	}
	call := approvals.Call{ChannelKey: "C", ThreadKey: "T", Tool: tool, Input: input, Cwd: "/w", Home: "/home/u"}
	p := k.add(approvals.Request{RequestID: fmt.Sprint(i), ThreadKey: "T", ChannelKey: "C", Starter: "admin", Tool: tool, Input: input})
	return k.track(p, call, &claudeproc.CanUseTool{ToolName: tool, Input: input}, nil, "admin")
}

// noteRules reads a prompt note's grant lines ("<label>: `<rule>` <where>.")
// as label -> "<rule> <where>".
func noteRules(note string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(note, "\n") {
		label, rest, ok := strings.Cut(line, ": `")
		if !ok {
			continue
		}
		rule, where, ok := strings.Cut(rest, "` ")
		if ok {
			out[label] = rule + " " + strings.TrimSuffix(where, ".")
		}
	}
	return out
}

// scopeWords is how a note says where a rule of scope applies.
func scopeWords(scope string) string {
	if scope == string(approvals.ScopeChannel) {
		return "in this channel, every thread and scheduled run"
	}
	return "in this thread"
}
