package bot

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
)

// Typed decisions: "allow 2", "deny 2 [reason]", "#2 <answer>".

// typedDecision is a parsed typed decision, or "#N <answer>" for a
// question (Choice "", answer set).
type typedDecision struct {
	approvals.Typed
	answer string
	// full is what followed "deny", for a deny whose first word turns out
	// not to name a prompt.
	full string
}

// parseTypedReply reads a typed decision, also in the form "#N <decision
// or answer>".
func parseTypedReply(text string) (typedDecision, bool) {
	text = strings.TrimSpace(text)
	if t, ok := approvals.ParseTyped(text); ok {
		return typedDecision{Typed: t, full: afterFirstWord(text)}, true
	}
	first, rest, _ := strings.Cut(text, " ")
	n, ok := strings.CutPrefix(first, "#")
	if !ok || n == "" || len(n) > 6 || strings.Trim(n, "0123456789") != "" {
		return typedDecision{}, false
	}
	rest = strings.TrimSpace(rest)
	if t, ok := approvals.ParseTyped(rest); ok && (t.Ref == "" || t.RefOrReason) {
		t.Ref, t.RefOrReason = n, false
		if t.Choice == approvals.ChoiceDeny {
			t.Reason = afterFirstWord(rest)
		}
		return typedDecision{Typed: t}, true
	}
	if rest == "" {
		return typedDecision{}, false
	}
	return typedDecision{Typed: approvals.Typed{Ref: n}, answer: rest}, true
}

func afterFirstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\n"); i >= 0 {
		return strings.TrimSpace(s[i:])
	}
	return ""
}

// resolveRef finds the open prompt td names: by number, by id prefix, or
// the only one open. A deny's hex-looking first word that names no prompt
// is read as the start of its reason. When none is found it says why.
func resolveRef(open []*promptState, td *typedDecision) (*promptState, string) {
	if td.Ref != "" {
		var found []*promptState
		for _, ps := range open {
			if strconv.Itoa(ps.num) == td.Ref || (len(td.Ref) >= 4 && strings.HasPrefix(ps.id, td.Ref)) {
				found = append(found, ps)
			}
		}
		switch {
		case len(found) == 1:
			return found[0], ""
		case len(found) > 1:
			return nil, "That names more than one open prompt. " + listOpen(open)
		case !td.RefOrReason:
			return nil, fmt.Sprintf("No open prompt is named %s here. %s", td.Ref, listOpen(open))
		}
		td.Ref, td.Reason = "", td.full
	}
	if len(open) == 1 {
		return open[0], ""
	}
	return nil, fmt.Sprintf("%d prompts are open: name the one you decide (`allow 2`, `deny 2 [reason]`, or its id). %s", len(open), listOpen(open))
}

func listOpen(open []*promptState) string {
	parts := make([]string, 0, len(open))
	for _, ps := range open {
		parts = append(parts, fmt.Sprintf("#%d %s (id %s)", ps.num, ps.prompt.Tool, ps.id[:6]))
	}
	return "Open: " + strings.Join(parts, "; ") + "."
}

func adapterTyped(c approvals.Choice) string {
	for _, ac := range adapters.ApprovalChoices {
		if ac.ID == adapters.ChoiceID(c) {
			return ac.Typed
		}
	}
	return string(c)
}
