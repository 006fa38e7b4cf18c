package bot

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// What a prompt shows: its title, detail, choices and note.

func buildPrompt(id string, c *claudeproc.CanUseTool, qs []approvals.Question) adapters.Prompt {
	if c.ToolName == approvals.ToolAskUserQuestion {
		p := adapters.Prompt{ID: id, Kind: adapters.PromptQuestion, Title: "Claude asks", Tool: c.ToolName}
		for _, q := range qs {
			aq := adapters.Question{Text: q.Text, Header: q.Header, Multi: q.Multi}
			for _, o := range q.Options {
				aq.Options = append(aq.Options, adapters.Option{Label: o.Label, Description: o.Description})
			}
			p.Questions = append(p.Questions, aq)
		}
		return p
	}
	title := c.ToolName + " wants to run"
	if c.Description != "" {
		title += ": " + text.Shorten(text.OneLine(c.Description), 200)
	}
	// The detail is whole: the adapter uploads what does not fit.
	return adapters.Prompt{
		ID: id, Kind: adapters.PromptApproval, Title: title, Tool: c.ToolName,
		Detail: approvalDetail(c), Choices: choicesByID(adapters.ChoiceAllow, adapters.ChoiceDeny),
	}
}

// approvalDetail shows exactly what would run: the command, or a diff-like
// view of an edit.
func approvalDetail(c *claudeproc.CanUseTool) string {
	var in map[string]any
	_ = json.Unmarshal(c.Input, &in)
	s := func(k string) string { v, _ := in[k].(string); return v }
	switch c.ToolName {
	case "Bash":
		return "$ " + s("command")
	case "Write":
		return s("file_path") + "\n" + prefixLines(strings.TrimSuffix(s("content"), "\n"), "+ ")
	case "ExitPlanMode":
		return s("plan")
	case "Edit":
		return s("file_path") + "\n" + prefixLines(s("old_string"), "- ") + "\n" + prefixLines(s("new_string"), "+ ")
	case "Read":
		return s("file_path")
	case "WebFetch":
		return s("url")
	}
	b, _ := json.MarshalIndent(in, "", "  ")
	return string(b)
}

func prefixLines(s, p string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = p + l
	}
	return strings.Join(lines, "\n")
}

func errString(err error) string {
	if err == nil {
		return "no questions"
	}
	return err.Error()
}

// grantsFor is the rule each grant choice on call stores, made once per
// prompt (approvals.GrantRule).
func grantsFor(call approvals.Call) map[approvals.Choice]approvals.Rule {
	out := map[approvals.Choice]approvals.Rule{}
	for _, ch := range approvals.GrantChoices(call) {
		if r, ok := approvals.GrantRule(call, ch); ok {
			out[ch] = r
		}
	}
	return out
}

// offeredChoices are the choices of an approval prompt: Allow, the grants
// that can describe the call, Deny. "Always allow" makes a channel rule,
// so it is offered only in threads an admin started (an admin deciding in
// someone else's thread can still type it).
func offeredChoices(grants map[approvals.Choice]approvals.Rule, starterIsAdmin bool) []adapters.Choice {
	ok := map[adapters.ChoiceID]bool{adapters.ChoiceAllow: true, adapters.ChoiceDeny: true}
	for g := range grants {
		if g != approvals.ChoiceAllowAlways || starterIsAdmin {
			ok[adapters.ChoiceID(g)] = true
		}
	}
	var out []adapters.Choice
	for _, c := range adapters.ApprovalChoices {
		if ok[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// promptNote says how to name the prompt and what each grant would allow.
func promptNote(ps *promptState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Prompt #%d (id `%s`): with several open, name it: `allow %d`, `deny %d [reason]`.", ps.num, ps.id[:6], ps.num, ps.num)
	for _, c := range ps.prompt.Choices {
		r, ok := ps.grants[approvals.Choice(c.ID)]
		if !ok {
			continue
		}
		where := "in this thread"
		if r.Scope == approvals.ScopeChannel {
			where = "in this channel, every thread and scheduled run"
		}
		fmt.Fprintf(&b, "\n%s: `%s` %s.", c.Label, r.Spec(), where)
	}
	if approvals.Protected(ps.call) {
		b.WriteString("\nThis names a protected place (the configuration of Claude Code, git or the shell, or the bot's own files): it is decided one call at a time.")
	}
	return b.String()
}

// offers reports whether the prompt offers the choice.
func offers(p adapters.Prompt, id adapters.ChoiceID) bool {
	for _, c := range p.Choices {
		if c.ID == id {
			return true
		}
	}
	return false
}

func choicesByID(ids ...adapters.ChoiceID) []adapters.Choice {
	var out []adapters.Choice
	for _, c := range adapters.ApprovalChoices {
		if slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// promptFromApproval rebuilds a prompt from its stored record (after a
// restart) so that it can be updated.
func promptFromApproval(a store.Approval) adapters.Prompt {
	c := &claudeproc.CanUseTool{ToolName: a.Tool, Input: json.RawMessage(a.Input)}
	var qs []approvals.Question
	if a.Kind == "question" {
		qs, _ = approvals.ParseQuestions(c.Input)
	}
	return buildPrompt(a.ID, c, qs)
}
