package matrix_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/dendrite"
)

func TestInvitesMentionsAndThreads(t *testing.T) {
	h := newHarness(t, options{})

	// A stranger's invite is refused.
	strange := h.mallory.CreateRoom(dendrite.RoomOptions{Name: "mallory's", Invite: []id.UserID{h.botUser.ID}})
	if !h.mallory.WaitFor(wait, func() bool { return h.mallory.Membership(strange, h.botUser.ID) == event.MembershipLeave }) {
		t.Fatalf("the bot did not refuse mallory's invite: membership %q", h.mallory.Membership(strange, h.botUser.ID))
	}

	// History from before the bot joined is not acted on.
	room := h.alice.CreateRoom(dendrite.RoomOptions{Name: "ops"})
	old := h.mention(h.alice, room, "an old question")
	h.alice.Invite(room, h.botUser.ID)
	if !h.alice.WaitFor(wait, func() bool { return h.alice.Membership(room, h.botUser.ID) == event.MembershipJoin }) {
		t.Fatal("the bot did not join alice's room")
	}
	h.alice.Invite(room, h.bob.User.ID)
	h.bob.Join(room)

	root := h.mention(h.alice, room, "hello there")
	reply := h.waitBot(room, root, `^ok: hello there$`)
	if reply.MsgType != event.MsgNotice {
		t.Errorf("reply msgtype %s, want m.notice", reply.MsgType)
	}
	rel, _ := reply.Raw["m.relates_to"].(map[string]any)
	if rel["rel_type"] != "m.thread" || rel["event_id"] != root.String() {
		t.Errorf("reply relation %v, want m.thread on %s", rel, root)
	}
	h.waitBot(room, root, `✓ .* · \$0\.\d+ · 1 turn`)

	// In the thread, no mention is needed.
	h.alice.SendText(room, "and again", "", root)
	h.waitBot(room, root, `ok: and again`)
	// Without a mention at top level: not for the bot.
	h.alice.SendText(room, "just chatting", "", "")
	// A message without m.mentions (an older client) naming the bot's id.
	legacy := h.alice.SendRaw(room, event.EventMessage, map[string]any{"msgtype": "m.text", "body": h.botUser.ID.String() + ": legacy hello"})
	h.waitBot(room, legacy, `ok: legacy hello`)
	// Someone not allowed who mentions the bot is told no.
	h.alice.Invite(room, h.mallory.User.ID)
	h.mallory.Join(room)
	nope := h.mention(h.mallory, room, "let me in")
	h.waitBot(room, nope, `not allowed to use this bot`)
	if n := len(h.botMessages(room, old, ".")); n != 0 {
		t.Errorf("the bot answered a message from before it joined: %s", h.dump(room, old))
	}
	if reqs := h.api.Requests(); len(reqs) != 3 {
		t.Errorf("model requests: %d, want 3 (hello, again, legacy)", len(reqs))
	}

	// A direct chat (alice and the bot alone): no mention needed.
	dm := h.alice.CreateRoom(dendrite.RoomOptions{Invite: []id.UserID{h.botUser.ID}})
	if !h.alice.WaitFor(wait, func() bool { return h.alice.Membership(dm, h.botUser.ID) == event.MembershipJoin }) {
		t.Fatal("the bot did not join the direct chat")
	}
	direct := h.alice.SendText(dm, "hi without a mention", "", "")
	h.waitBot(dm, direct, `ok: hi without a mention`)
}

func TestApprovalByReactionAndTyped(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	root := h.mention(h.alice, room, "run touch made.txt")
	prompt := h.waitPrompt(room, root, "")
	// alice is no admin: no ♾️ (a channel rule); touch is no file tool: no 📂.
	if keys := strings.Join(h.ownReactions(room, prompt), " "); keys != "✅ 🧵 ❌" {
		t.Errorf("pre-added reactions %q, want in order ✅ 🧵 ❌", keys)
	}
	// Bob may use the bot but did not start the thread: ignored and told.
	h.bob.React(room, prompt, "✅")
	h.waitBot(room, root, `Only @alice:\S+ \(who started this thread\) or an admin can decide this`)
	if _, err := os.Stat(filepath.Join(h.dir, "made.txt")); err == nil {
		t.Fatal("bob's reaction ran the command")
	}
	refused := false
	log, err := h.st.AuditLog(t.Context(), "matrix/"+room.String()+"/"+root.String(), 100)
	for _, e := range log {
		if e.UserID == h.bob.User.ID.String() && e.Action == "refused" && !e.Allowed {
			refused = true
		}
	}
	if !refused {
		t.Errorf("bob's reaction was not recorded as refused: %+v %v", log, err)
	}
	h.alice.React(room, prompt, "✅")
	h.waitBot(room, root, `Allowed by @alice`)
	h.waitBot(room, root, `tool result: `)
	if _, err := os.Stat(filepath.Join(h.dir, "made.txt")); err != nil {
		t.Error(err)
	}
	// The tool's activity: one status line, edited from running to done.
	status := h.waitBot(room, root, "^✓ \\*\\*Bash\\*\\* `touch made.txt`")
	if status.Edits == 0 {
		t.Errorf("the tool status was posted done at once, never edited: %q", status.Body)
	}
	if !h.alice.WaitFor(wait, func() bool { return len(h.ownReactions(room, prompt)) == 0 }) {
		t.Errorf("the bot's reactions stay on a decided prompt: %v", h.ownReactions(room, prompt))
	}

	// Typed: allow, then deny with a reason.
	h.alice.SendText(room, "run touch typed.txt", "", root)
	p2 := h.waitPrompt(room, root, prompt)
	h.alice.SendText(room, "allow", "", root)
	h.waitBot(room, root, `Allowed by @alice.*`)
	if _, err := os.Stat(filepath.Join(h.dir, "typed.txt")); err != nil {
		h.alice.WaitFor(10*time.Second, func() bool { _, err := os.Stat(filepath.Join(h.dir, "typed.txt")); return err == nil })
	}
	h.alice.SendText(room, "run touch never.txt", "", root)
	h.waitPromptNot(room, root, prompt, p2)
	h.alice.SendText(room, "deny too risky today", "", root)
	h.waitBot(room, root, `Denied by @alice:\S+: too risky today`)
	h.waitBot(room, root, `tool result: Denied by @alice:\S+: too risky today`)
	if _, err := os.Stat(filepath.Join(h.dir, "never.txt")); !os.IsNotExist(err) {
		t.Errorf("denied command ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "typed.txt")); err != nil {
		t.Errorf("typed allow: %v", err)
	}
}

// waitPromptNot waits for a prompt other than those given.
func (h *harness) waitPromptNot(room id.RoomID, root id.EventID, skip ...id.EventID) id.EventID {
	h.t.Helper()
	var prompt id.EventID
	if !h.alice.WaitFor(wait, func() bool {
		for _, m := range h.alice.Thread(room, root) {
			if m.Sender == h.botUser.ID && strings.Contains(m.Body, "React ✅ allow") && !contains(skip, m.ID) {
				prompt = m.ID
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("no new prompt:\n%s", h.dump(room, root))
	}
	return prompt
}

func contains(l []id.EventID, e id.EventID) bool {
	for _, x := range l {
		if x == e {
			return true
		}
	}
	return false
}

// polls returns the poll starts of a thread.
func (h *harness) polls(room id.RoomID, root id.EventID) []dendrite.Message {
	var out []dendrite.Message
	for _, m := range h.alice.Thread(room, root) {
		if m.Type == event.EventUnstablePollStart {
			out = append(out, m)
		}
	}
	return out
}

func (h *harness) pollEnded(room id.RoomID, poll id.EventID) bool {
	for _, e := range h.alice.Events(room) {
		if e.Type.Type != "org.matrix.msc3381.poll.end" {
			continue
		}
		if rel, _ := e.Content.Raw["m.relates_to"].(map[string]any); rel != nil && rel["event_id"] == poll.String() {
			return true
		}
	}
	return false
}

func TestQuestionByPollKeycapAndTyped(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	root := h.mention(h.alice, room, "ask one")

	// A poll, with a text fallback.
	var poll dendrite.Message
	if !h.alice.WaitFor(wait, func() bool {
		ps := h.polls(room, root)
		if len(ps) == 1 {
			poll = ps[0]
		}
		return poll.ID != ""
	}) {
		t.Fatalf("no poll in the thread:\n%s", h.dump(room, root))
	}
	if !strings.Contains(poll.Body, "Which one?") || !strings.Contains(poll.Body, "2. Blue") {
		t.Errorf("poll fallback text %q", poll.Body)
	}
	prompt := h.waitBot(room, root, `Which one\?`)
	if !h.alice.WaitFor(wait, func() bool { return len(h.ownReactions(room, prompt.ID)) == 3 }) {
		t.Errorf("keycaps on the question: %v", h.ownReactions(room, prompt.ID))
	}
	// Bob's vote does not count.
	h.bob.VotePoll(room, poll.ID, "o1")
	h.waitBot(room, root, `Only @alice:\S+ \(who started this thread\)`)
	h.alice.VotePoll(room, poll.ID, "o2")
	h.waitBot(room, root, `Answered by @alice:\S+: Blue`)
	h.waitBot(room, root, `tool result: .*"Which one\?"="Blue"`)
	if !h.alice.WaitFor(wait, func() bool { return h.pollEnded(room, poll.ID) }) {
		t.Error("the poll was not ended after the answer")
	}

	// Keycap reaction.
	h.alice.SendText(room, "ask one", "", root)
	var p2 dendrite.Message
	if !h.alice.WaitFor(wait, func() bool {
		for _, m := range h.botMessages(room, root, `Which one\?`) {
			if m.ID != prompt.ID && strings.Contains(m.Body, "Vote in the poll") && len(h.ownReactions(room, m.ID)) == 3 {
				p2 = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no second question:\n%s", h.dump(room, root))
	}
	h.alice.React(room, p2.ID, "3️⃣")
	h.waitBot(room, root, `Answered by @alice:\S+: Green`)
	h.waitBot(room, root, `tool result: .*"Which one\?"="Green"`)

	// Typed number.
	h.alice.SendText(room, "ask one", "", root)
	if !h.alice.WaitFor(wait, func() bool { return len(h.polls(room, root)) == 3 }) {
		t.Fatalf("no third poll:\n%s", h.dump(room, root))
	}
	h.alice.SendText(room, "1", "", root)
	h.waitBot(room, root, `Answered by @alice:\S+: Red`)
	h.waitBot(room, root, `tool result: .*"Which one\?"="Red"`)
}

func TestStopCommand(t *testing.T) {
	hold := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(hold) }) })
	h := newHarness(t, options{script: script(hold)})
	room := h.room(false)
	root := h.mention(h.alice, room, "slow please")
	h.waitBot(room, root, `slow answe`)
	h.alice.SendText(room, "stop", "", root)
	h.waitBot(room, root, `■ Stopped`)
}

func TestRestartNeitherReplaysNorLoses(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	root := h.mention(h.alice, room, "remember the number 42")
	h.waitBot(room, root, `ok: remember the number 42`)
	h.waitBot(room, root, `✓ .* turn`)

	h.stop()
	// Sent while the bot is down.
	h.alice.SendText(room, "what was the number?", "", root)
	h.start()
	h.waitBot(room, root, `ok: .*what was the number\?`)
	reqs := h.api.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.Transcript(), "remember the number 42") {
		t.Errorf("the session did not resume with its context:\n%s", last.Transcript())
	}
	// Let a few sync rounds pass: nothing is answered twice.
	h.alice.SendText(room, "one more", "", root)
	h.waitBot(room, root, `ok: .*one more`)
	if n := len(h.botMessages(room, root, `^ok: remember the number 42$`)); n != 1 {
		t.Errorf("first answer posted %d times", n)
	}
	if n := len(h.botMessages(room, root, `what was the number\?$`)); n != 1 {
		t.Errorf("answer to the message sent while down posted %d times:\n%s", n, h.dump(room, root))
	}
}

func TestLongAnswerArrivesWhole(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	root := h.mention(h.alice, room, "long 70000")
	h.waitBot(room, root, `✓ .* turn`)
	want := longAnswer(70000)
	// Edits are paced and sent in the background: the last may land after
	// the turn's footer.
	var got strings.Builder
	parts, edited := 0, 0
	whole := h.alice.WaitFor(wait, func() bool {
		got.Reset()
		parts, edited = 0, 0
		for _, m := range h.alice.Thread(room, root) {
			if m.Sender != h.botUser.ID || strings.HasPrefix(m.Body, "✓ ") {
				continue
			}
			got.WriteString(withoutFooter(m.Body))
			parts++
			edited += m.Edits
		}
		return stripFences(got.String()) == stripFences(want)
	})
	if edited == 0 {
		t.Error("the answer was not streamed by editing")
	}
	if parts < 2 {
		t.Fatalf("a 70 000-character answer in %d message(s)", parts)
	}
	if !whole {
		t.Errorf("the answer did not arrive whole: %d characters in %d parts, want %d", got.Len(), parts, len(want))
	}
}

// stripFences drops fence lines, which splitting repeats at cuts.
func stripFences(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "```") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

func TestFilesAreSavedAndImagesPassed(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	root := h.mention(h.alice, room, "I will send files")
	h.waitBot(room, root, `ok: I will send files`)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
	h.alice.SendFile(room, root, "notes.txt", "text/plain", []byte("some notes\n"))
	h.waitBot(room, root, `notes\.txt`)
	h.alice.SendImage(room, root, "dot.png", "image/png", png)
	h.waitBot(room, root, `dot\.png`)
	for name, want := range map[string][]byte{"notes.txt": []byte("some notes\n"), "dot.png": png} {
		if !h.alice.WaitFor(wait, func() bool { return fileHas(attachedPath(h.dir, name), want) }) {
			t.Errorf("%s was not saved into the working directory", name)
		}
	}
	var sawImage bool
	for _, r := range h.api.Requests() {
		if strings.Contains(string(r.Body), `"type":"image"`) {
			sawImage = true
		}
	}
	if !sawImage {
		t.Error("the image was not passed to Claude as image content")
	}
}

func fileHas(path string, want []byte) bool {
	b, err := os.ReadFile(path)
	return err == nil && string(b) == string(want)
}

// TestPendingApprovalExpiresOnRestart: an approval left open by a stopped
// bot shows as expired after the restart, and its reactions are withdrawn.
func TestPendingApprovalExpiresOnRestart(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	root := h.mention(h.alice, room, "run touch late.txt")
	prompt := h.waitPrompt(room, root, "")
	h.restart()
	if !h.alice.WaitFor(wait, func() bool {
		for _, m := range h.alice.Thread(room, root) {
			if m.ID == prompt && strings.Contains(m.Body, "Expired") {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the open prompt was not shown as expired:\n%s", h.dump(room, root))
	}
	if !h.alice.WaitFor(wait, func() bool { return len(h.ownReactions(room, prompt)) == 0 }) {
		t.Errorf("the bot's reactions stay on an expired prompt: %v", h.ownReactions(room, prompt))
	}
	h.alice.React(room, prompt, "✅")
	h.alice.SendText(room, "hello again", "", root)
	h.waitBot(room, root, `ok: .*hello again`)
	if _, err := os.Stat(filepath.Join(h.dir, "late.txt")); !os.IsNotExist(err) {
		t.Errorf("a click on an expired prompt ran the command: %v", err)
	}
}

func TestQuestionsWithSeveralPartsAndMultiSelect(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	root := h.mention(h.alice, room, "ask two")
	var polls []dendrite.Message
	if !h.alice.WaitFor(wait, func() bool { polls = h.polls(room, root); return len(polls) == 2 }) {
		t.Fatalf("want a poll per question:\n%s", h.dump(room, root))
	}
	second := polls[0]
	if !strings.Contains(second.Body, "How many?") {
		second = polls[1]
	}
	first := polls[0]
	if first.ID == second.ID {
		first = polls[1]
	}
	h.alice.VotePoll(room, second.ID, "o2")
	h.waitBot(room, root, `Still to answer: Which one\?`)
	h.alice.VotePoll(room, first.ID, "o1")
	h.waitBot(room, root, `Answered by @alice:\S+: Red; Two`)
	h.waitBot(room, root, `tool result: .*"Which one\?"="Red".*"How many\?"="Two"`)
	for _, p := range polls {
		if !h.alice.WaitFor(wait, func() bool { return h.pollEnded(room, p.ID) }) {
			t.Errorf("poll %s not ended", p.ID)
		}
	}

	// Multi-select: no poll (a vote would count at its first click); typed.
	h.alice.SendText(room, "ask multi", "", root)
	h.waitBot(room, root, `several answers possible`)
	if n := len(h.polls(room, root)); n != 2 {
		t.Errorf("%d polls after a multi-select question, want still 2", n)
	}
	h.alice.SendText(room, "1,3", "", root)
	h.waitBot(room, root, `Answered by @alice:\S+: Logging, Tracing`)
	h.waitBot(room, root, `tool result: .*"Which one\?"="Logging, Tracing"`)
}

func TestLongToolOutputGoesUpAsAFile(t *testing.T) {
	h := newHarness(t, options{})
	room := h.room(false)
	// Claude Code runs seq without asking (a read-only command).
	root := h.mention(h.alice, room, "run seq 1 3000")
	file := h.waitBot(room, root, `^bash-output\.txt$`)
	if file.MsgType != event.MsgFile {
		t.Fatalf("msgtype %s", file.MsgType)
	}
	url, _ := file.Raw["url"].(string)
	uri, err := id.ContentURIString(url).Parse()
	if err != nil {
		t.Fatalf("file url %q: %v", url, err)
	}
	data, err := h.alice.Matrix.DownloadBytes(t.Context(), uri)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "1\n2\n3\n") || !strings.Contains(string(data), "\n3000") {
		t.Errorf("file holds %d bytes: %.40q…", len(data), data)
	}
}

// TestRestartAfterABusyDowntime: more was said while the bot was down than
// one sync returns (the timeline is "limited"); the rest is fetched, and
// every message reaches Claude once.
func TestRestartAfterABusyDowntime(t *testing.T) {
	h := newHarness(t, options{mod: func(_ *bot.Config, mc *matrix.Config) { mc.TimelineLimit = 3 }})
	room := h.room(false)
	root := h.mention(h.alice, room, "hello")
	h.waitBot(room, root, `^ok: hello$`)
	h.waitBot(room, root, `✓ .* turn`)
	h.stop()
	for i := 1; i <= 8; i++ {
		h.alice.SendText(room, fmt.Sprintf("note %d", i), "", root)
	}
	h.start()
	seen := func() map[string]int {
		n := map[string]int{}
		for _, r := range h.api.Requests() {
			for i := 1; i <= 8; i++ {
				if strings.Contains(r.LastUserText(), fmt.Sprintf("note %d", i)) {
					n[fmt.Sprintf("note %d", i)]++
				}
			}
		}
		return n
	}
	if !h.alice.WaitFor(wait, func() bool { return len(seen()) == 8 }) {
		t.Fatalf("Claude got %v of 8 notes sent while the bot was down:\n%s", seen(), h.dump(room, root))
	}
	if n := len(h.botMessages(room, root, `^ok: hello$`)); n != 1 {
		t.Errorf("the first answer was posted %d times", n)
	}
}
