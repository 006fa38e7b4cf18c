package matrix_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// The model's answer to "hostile": a script link, an image both ways, a
// script element, and a link that should stay one.
const hostileAnswer = "see [click](javascript:alert(1)) and <img src=https://x.example/y.png> " +
	"and ![pic](https://x.example/y.png) <script>alert(1)</script> [fine](https://example.org/ok)"

// hostileCommand prints Markdown that the model then quotes in its answer
// ("tool result: …"), and that the prompt and the tool line show; touch
// makes it need approval.
const hostileCommand = `touch seen.txt && printf '%s\n' '[x](javascript:alert(2)) <img src=x onerror=alert(2)> ![p](https://x.example/p.png)'`

// TestModelHTMLIsSanitizedOnDendrite: what a reader's client gets from
// Dendrite, every bot event and every edit of one, has only the tags,
// attributes and link schemes the spec lists, whatever the model wrote;
// checked by parsing formatted_body as a browser would.
func TestModelHTMLIsSanitizedOnDendrite(t *testing.T) {
	chat := fakeanthropic.ChatScript(nil)
	h := newHarness(t, options{script: func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if len(req.ToolResults()) == 0 && strings.HasSuffix(req.LastUserText(), "hostile") {
			return fakeanthropic.TextReply(hostileAnswer)
		}
		return chat(ctx, req)
	}})
	room := h.room(false)
	root := h.mention(h.alice, room, "hostile")
	// The plain body is the model's text as it is; edits are paced, so
	// wait for the whole of it (the turn's footer may ride under it).
	answer := h.waitBot(room, root, "^"+regexp.QuoteMeta(hostileAnswer)+"(\n\n✓ .*)?$")
	h.waitBot(room, root, `✓ .* turn`)
	for _, want := range []string{`<a href="https://example.org/ok">fine</a>`, `<a href="https://x.example/y.png">pic</a>`, "click"} {
		if !strings.Contains(answer.FormattedBody, want) {
			t.Errorf("formatted_body lacks %s: %q", want, answer.FormattedBody)
		}
	}

	// A tool: its prompt, its status line, the answer quoting its output.
	h.alice.SendText(room, "run "+hostileCommand, "", root)
	prompt := h.waitPrompt(room, root, "")
	h.alice.React(room, prompt, "✅")
	quoted := h.waitBot(room, root, `^tool result: .*javascript:alert\(2\)`)
	if quoted.FormattedBody == "" {
		t.Errorf("the quoted tool output has no HTML: the check below would prove nothing: %q", quoted.Body)
	}
	h.waitBot(room, root, "^✓ \\*\\*Bash\\*\\*")

	checked := 0
	for _, evt := range h.alice.Events(room) {
		if evt.Sender != h.botUser.ID || evt.Type != event.EventMessage {
			continue
		}
		for _, fb := range formattedBodies(evt.Content.Raw) {
			checked++
			if v := matrix.MatrixHTMLViolations(fb); len(v) > 0 {
				t.Errorf("event %s: %q\n  violations: %q", evt.ID, fb, v)
			}
		}
	}
	if checked < 4 {
		t.Errorf("only %d formatted bodies from the bot:\n%s", checked, h.dump(room, root))
	}
}

// formattedBodies are an event's formatted_body and its edit's.
func formattedBodies(raw map[string]any) []string {
	var out []string
	if fb, ok := raw["formatted_body"].(string); ok {
		out = append(out, fb)
	}
	if nc, ok := raw["m.new_content"].(map[string]any); ok {
		if fb, ok := nc["formatted_body"].(string); ok {
			out = append(out, fb)
		}
	}
	return out
}
