package slack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// sections are the mrkdwn texts of a message's section blocks, in order.
func sections(m fakeslack.Message) []string {
	var blocks []struct {
		Type string
		Text struct{ Text string }
	}
	_ = json.Unmarshal(m.Blocks, &blocks)
	var out []string
	for _, b := range blocks {
		if b.Type == "section" {
			out = append(out, b.Text.Text)
		}
	}
	return out
}

// promptOf is the bot's message with buttons in the thread.
func promptOf(t *testing.T, s *solo, th adapters.ThreadRef) fakeslack.Message {
	t.Helper()
	for _, m := range s.botMessages(th) {
		if len(m.ActionIDs()) > 0 {
			return m
		}
	}
	t.Fatalf("no prompt in the thread")
	return fakeslack.Message{}
}

// TestPromptOffersItsChoices: one button per offered choice, in order, the
// note under the detail, inert; a click carries the choice's id.
func TestPromptOffersItsChoices(t *testing.T) {
	s := newSolo(t)
	th := s.thread()
	p := adapters.Prompt{ID: "p-folder", Kind: adapters.PromptApproval, Title: "#2 · Write wants to run", Tool: "Write",
		Detail:  "/w/src/a.go\n+ package a",
		Note:    "Prompt #2: name it `allow 2`.\n**Allow folder for thread**: `Write(src/**)` in this thread. Not <!here> nor @channel.",
		Choices: choices(adapters.ChoiceAllow, adapters.ChoiceAllowFolder, adapters.ChoiceDeny)}
	ref, err := s.ad.Direct().Ask(t.Context(), th, p)
	if err != nil {
		t.Fatal(err)
	}
	m := promptOf(t, s, th)
	if m.TS != ref.ID {
		t.Errorf("prompt %s, ref %s", m.TS, ref.ID)
	}
	if got := strings.Join(m.ActionIDs(), " "); got != "claudeops_approval_allow claudeops_approval_allow_folder claudeops_approval_deny" {
		t.Errorf("buttons %s", got)
	}
	secs := sections(m)
	if len(secs) != 3 || secs[1] != "```\n/w/src/a.go\n+ package a\n```" {
		t.Fatalf("sections %q, want title, detail, note", secs)
	}
	note := secs[2]
	if !strings.Contains(note, "*Allow folder for thread*: `Write(src/**)` in this thread") || strings.Contains(note, "<!here>") || strings.Contains(note, "@channel") {
		t.Errorf("note %q", note)
	}
	if err := s.fs.Click(alice, general, m.TS, "claudeops_approval_allow_folder"); err != nil {
		t.Fatal(err)
	}
	if ev := s.nextAction(); ev.Click.Choice != adapters.ChoiceAllowFolder || ev.Click.PromptID != "p-folder" || ev.Thread != th || ev.User.ID != alice {
		t.Errorf("click %+v", ev)
	}
	s.noViolations()
}

// TestLongDetailGoesUpBeforeThePrompt: a detail too long for the prompt is
// uploaded whole, in the thread, before the prompt with its buttons; the
// prompt shows its head, marked, and says where the rest is. An update
// shows the same and uploads nothing more.
func TestLongDetailGoesUpBeforeThePrompt(t *testing.T) {
	s := newSolo(t)
	th := s.thread()
	var b strings.Builder
	b.WriteString("$ ")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "echo line %03d <!here> && \\\n", i)
	}
	b.WriteString("rm -rf /tmp/the-last-line-matters")
	p := adapters.Prompt{ID: "p-long", Kind: adapters.PromptApproval, Title: "#1 · Bash wants to run", Tool: "Bash",
		Detail: b.String(), Note: "Prompt #1.", Choices: choices(adapters.ChoiceAllow, adapters.ChoiceDeny)}
	ref, err := s.ad.Direct().Ask(t.Context(), th, p)
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.botMessages(th)
	if len(msgs) != 2 || len(msgs[0].Files) != 1 || msgs[1].TS != ref.ID {
		t.Fatalf("want the file, then the prompt; got %d messages", len(msgs))
	}
	f := msgs[0].Files[0]
	if string(f.Content) != p.Detail || f.Name != "bash-input.txt" {
		t.Errorf("file %s holds %d bytes, want the %d of the detail", f.Name, len(f.Content), len(p.Detail))
	}
	detail := sections(msgs[1])[1]
	for _, want := range []string{
		fmt.Sprintf("of %d bytes (301 lines in all). The whole input is in the file above*", len(p.Detail)),
		"```\n$ echo line 001 &lt;!here&gt; &amp;&amp; \\\necho line 002",
		"\n```\n*… cut here: the rest is in the file above.*",
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("the detail section lacks %q:\n%s", want, detail)
		}
	}
	if strings.Contains(detail, "the-last-line-matters") || len([]rune(detail)) > 3000 {
		t.Errorf("the head is not a head (%d characters)", len([]rune(detail)))
	}

	p.State, p.Outcome = adapters.PromptDecided, "Denied by "+alice
	if err := s.ad.Direct().UpdatePrompt(t.Context(), ref, p); err != nil {
		t.Fatal(err)
	}
	m := s.waitMessage(general, ref.ID, "Denied by")
	if len(m.ActionIDs()) != 0 || sections(m)[1] != detail {
		t.Errorf("decided prompt: buttons %v, detail changed: %v", m.ActionIDs(), sections(m)[1] != detail)
	}
	if n := len(s.fs.Calls("files.completeUploadExternal")); n != 1 {
		t.Errorf("%d uploads, want 1", n)
	}
	s.noViolations()
}

// TestPromptNotShownWhenUploadFails: when the whole detail cannot be put
// in the thread, Ask fails and nothing is posted: no buttons to click.
func TestPromptNotShownWhenUploadFails(t *testing.T) {
	for _, method := range []string{"files.getUploadURLExternal", "files.completeUploadExternal"} {
		t.Run(method, func(t *testing.T) {
			s := newSolo(t)
			th := s.thread()
			s.fs.Fail(method, fakeslack.Fault{Error: "internal_error"})
			p := adapters.Prompt{ID: "p-fail", Kind: adapters.PromptApproval, Title: "Bash wants to run", Tool: "Bash",
				Detail: strings.Repeat("echo a long command\n", 400), Choices: choices(adapters.ChoiceAllow, adapters.ChoiceDeny)}
			if _, err := s.ad.Direct().Ask(t.Context(), th, p); err == nil {
				t.Fatal("Ask succeeded without the whole input")
			}
			if msgs := s.botMessages(th); len(msgs) != 0 {
				t.Errorf("posted %d messages, the first: %q", len(msgs), msgs[0].VisibleText())
			}
			if n := len(s.fs.Calls("chat.postMessage")); n != 0 {
				t.Errorf("%d chat.postMessage calls", n)
			}
		})
	}
}

// TestDetailCannotBreakOut: whatever the detail holds, it stays inside
// its code block, mentions nobody, and characters that hide or reorder
// text show as escapes.
func TestDetailCannotBreakOut(t *testing.T) {
	s := newSolo(t)
	th := s.thread()
	detail := "$ echo ok\n```\n*Approved by the admins* <!here> <@" + bob + "> @channel <#C0GENERAL1>\n```\nrm -rf ~/\u202eexe.txt\r"
	p := adapters.Prompt{ID: "p-forge", Kind: adapters.PromptApproval, Title: "Bash wants to run: @here look", Tool: "Bash",
		Detail: detail, Choices: choices(adapters.ChoiceAllow, adapters.ChoiceDeny)}
	if _, err := s.ad.Direct().Ask(t.Context(), th, p); err != nil {
		t.Fatal(err)
	}
	m := promptOf(t, s, th)
	secs := sections(m)
	code := secs[1]
	inner, ok := strings.CutPrefix(code, "```\n")
	inner, ok2 := strings.CutSuffix(inner, "\n```")
	if !ok || !ok2 || strings.Contains(inner, "```") {
		t.Errorf("the detail can leave its code block: %q", code)
	}
	for _, s := range append(secs, m.Text) {
		for _, live := range []string{"<!", "<@", "<#", "@channel", "@here", "\u202e", "\r"} {
			if strings.Contains(s, live) {
				t.Errorf("%q is live in %q", live, s)
			}
		}
	}
	if !strings.Contains(inner, `rm -rf ~/\u202eexe.txt\x0d`) {
		t.Errorf("hidden characters not shown: %q", inner)
	}
}

// TestForgedClickIsDropped: a click counts only from its prompt's own
// message. A payload naming the prompt from another channel, or from
// another message of its channel, delivers nothing.
func TestForgedClickIsDropped(t *testing.T) {
	s := newSolo(t)
	const other = "C0OTHER001"
	s.fs.AddChannel(fakeslack.Channel{ID: other, Name: "other", Members: []string{alice, bob}})
	th := s.thread()
	ref, err := s.ad.Direct().Ask(t.Context(), th, adapters.Prompt{ID: "p-target", Kind: adapters.PromptApproval, Title: "Bash wants to run",
		Tool: "Bash", Detail: "$ make deploy", Choices: choices(adapters.ChoiceAllow, adapters.ChoiceDeny)})
	if err != nil {
		t.Fatal(err)
	}
	forged := map[string]any{"action_id": "claudeops_approval_allow", "value": "p-target", "block_id": "approval:p-target"}
	elsewhere := s.fs.Post(bob, other, "a message of bob's channel")
	if err := s.fs.ForgeAction(bob, other, elsewhere, forged); err != nil {
		t.Fatal(err)
	}
	if err := s.fs.ForgeAction(bob, general, th.Thread, forged); err != nil {
		t.Fatal(err)
	}
	// The genuine click comes after the forged ones: the first click
	// delivered must be it.
	if err := s.fs.Click(alice, general, ref.ID, "claudeops_approval_deny"); err != nil {
		t.Fatal(err)
	}
	if ev := s.nextAction(); ev.User.ID != alice || ev.Click.Choice != adapters.ChoiceDeny || ev.Click.PromptID != "p-target" || ev.Thread != th {
		t.Errorf("delivered %+v, want alice's deny", ev)
	}
}
