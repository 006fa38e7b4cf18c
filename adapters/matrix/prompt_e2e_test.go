package matrix_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/dendrite"
)

// longDetail is a Write of a file too big to show inline.
func longDetail() string {
	var b strings.Builder
	b.WriteString("/w/big.txt\n")
	for i := 1; b.Len() < 40<<10; i++ {
		fmt.Fprintf(&b, "+ line %05d of a file being written @room\n", i)
	}
	return b.String() + "+ the last line"
}

// fileData is what an m.file message holds, decrypted if it is encrypted.
func fileData(t *testing.T, c *dendrite.Client, m dendrite.Message) []byte {
	t.Helper()
	raw, _ := json.Marshal(m.Raw)
	var fc event.MessageEventContent
	if err := json.Unmarshal(raw, &fc); err != nil {
		t.Fatal(err)
	}
	url := fc.URL
	if fc.File != nil {
		url = fc.File.URL
	}
	uri, err := url.Parse()
	if err != nil {
		t.Fatalf("file url %q: %v", url, err)
	}
	data, err := c.Matrix.DownloadBytes(t.Context(), uri)
	if err == nil && fc.File != nil {
		err = fc.File.DecryptInPlace(data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// indexOf is the position of evID in the thread as c sees it, -1 if absent.
func indexOf(msgs []dendrite.Message, evID string) int {
	for i, m := range msgs {
		if m.ID.String() == evID {
			return i
		}
	}
	return -1
}

// checkLongDetailPrompt: the whole detail went up as a file, in the
// thread, before the prompt; the prompt shows its head and the offered
// reactions only.
func checkLongDetailPrompt(t *testing.T, s *solo, room id.RoomID, encrypted bool) {
	th := s.thread(room)
	p := adapters.Prompt{ID: "p-long", Kind: adapters.PromptApproval, Title: "#1 · Write wants to run", Tool: "Write",
		Detail: longDetail(), Note: "Prompt #1.", Choices: choices(adapters.ChoiceAllow, adapters.ChoiceAllowFolder, adapters.ChoiceDeny)}
	ref, err := s.ad.Direct().Ask(t.Context(), th, p)
	if err != nil {
		t.Fatal(err)
	}
	prompt := s.message(s.alice, th, ref.ID)
	var msgs []dendrite.Message
	var file dendrite.Message
	s.alice.WaitFor(wait, func() bool { // the file's keys may come after the prompt's
		msgs = s.alice.Thread(room, id.EventID(th.Thread))
		for _, m := range msgs {
			if m.MsgType == event.MsgFile {
				file = m
			}
		}
		return file.Body != "" && !slices.ContainsFunc(msgs, func(m dendrite.Message) bool { return m.Type == event.EventEncrypted })
	})
	if file.Body != "write-input.txt" || indexOf(msgs, file.ID.String()) > indexOf(msgs, ref.ID) {
		t.Fatalf("want write-input.txt before the prompt:\n%v", msgs)
	}
	if _, enc := file.Raw["file"]; enc != encrypted || (file.Raw["url"] != nil) == encrypted {
		t.Errorf("encrypted room %v, file content %v", encrypted, file.Raw)
	}
	if got := fileData(t, s.alice, file); string(got) != p.Detail {
		t.Errorf("the file holds %d bytes, want the %d of the detail", len(got), len(p.Detail))
	}
	for _, want := range []string{"The whole input is in the file above", "+ line 00001 of a file being written", "React ✅ allow · 📂 allow folder for thread · ❌ deny"} {
		if !strings.Contains(prompt.Body, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt.Body, "the last line") {
		t.Error("the prompt shows the whole detail: not a head")
	}
	if !s.alice.WaitFor(wait, func() bool { return s.ownKeys(s.alice, room, id.EventID(ref.ID)) == "✅ 📂 ❌" }) {
		t.Errorf("reactions %q, want ✅ 📂 ❌", s.ownKeys(s.alice, room, id.EventID(ref.ID)))
	}
}

func TestLongDetailGoesUpBeforeThePrompt(t *testing.T) {
	s := newSolo(t, soloOptions{})
	checkLongDetailPrompt(t, s, s.room(s.alice, false), false)
}

// failUploads answers every media upload 413, as a homeserver does for a
// file over its limit.
func failUploads(next http.RoundTripper) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		if !strings.Contains(r.URL.Path, "/media/") || !strings.HasSuffix(r.URL.Path, "/upload") {
			return next.RoundTrip(r)
		}
		body := `{"errcode":"M_TOO_LARGE","error":"too large"}`
		return &http.Response{StatusCode: http.StatusRequestEntityTooLarge, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPromptNotShownWhenUploadFails: when the whole detail cannot be put
// in the thread, Ask fails and posts nothing: no prompt, no reactions.
func TestPromptNotShownWhenUploadFails(t *testing.T) {
	s := newSolo(t, soloOptions{transport: failUploads})
	room := s.room(s.alice, false)
	th := s.thread(room)
	p := adapters.Prompt{ID: "p-fail", Kind: adapters.PromptApproval, Title: "Write wants to run", Tool: "Write",
		Detail: longDetail(), Choices: choices(adapters.ChoiceAllow, adapters.ChoiceDeny)}
	if _, err := s.ad.Direct().Ask(t.Context(), th, p); err == nil {
		t.Fatal("Ask succeeded without the whole input")
	}
	after, err := s.ad.Direct().Post(t.Context(), th, adapters.Message{Kind: adapters.KindNotice, Text: "after"})
	if err != nil {
		t.Fatal(err)
	}
	s.message(s.alice, th, after.ID)
	for _, e := range s.alice.Events(room) {
		if e.Sender == s.botUser.ID && e.ID.String() != after.ID && e.StateKey == nil {
			t.Errorf("the bot sent %s: %v", e.Type.Type, e.Content.Raw)
		}
	}
}

// TestOnlyOfferedReactionsCount: the bot adds the reactions of the offered
// choices; a reaction of a choice not offered delivers nothing.
func TestOnlyOfferedReactionsCount(t *testing.T) {
	s := newSolo(t, soloOptions{})
	room := s.room(s.alice, false)
	th := s.thread(room)
	ref, err := s.ad.Direct().Ask(t.Context(), th, approval)
	if err != nil {
		t.Fatal(err)
	}
	prompt := s.message(s.alice, th, ref.ID)
	if !strings.Contains(prompt.Body, "React ✅ allow · 🧵 allow for thread · ❌ deny — or reply `allow`, `allow thread` or `deny [reason]`.") {
		t.Errorf("hint in %q", prompt.Body)
	}
	if !s.alice.WaitFor(wait, func() bool { return s.ownKeys(s.alice, room, id.EventID(ref.ID)) == "✅ 🧵 ❌" }) {
		t.Errorf("reactions %q, want ✅ 🧵 ❌", s.ownKeys(s.alice, room, id.EventID(ref.ID)))
	}
	s.alice.React(room, id.EventID(ref.ID), "📂")
	s.alice.React(room, id.EventID(ref.ID), "♾️")
	s.alice.React(room, id.EventID(ref.ID), "🧵")
	got := actions(s.barrier(s.alice, room))
	if len(got) != 1 || got[0].Click.Choice != adapters.ChoiceAllowThread {
		t.Errorf("clicks %+v, want only allow_thread", got)
	}
}

// TestLongToolInputUploadedOnce: a tool's input too long for its status
// line goes up whole as a file before the line, once however often the
// line is edited; the line shows its head and points to the file.
func TestLongToolInputUploadedOnce(t *testing.T) {
	s := newSolo(t, soloOptions{})
	room := s.room(s.alice, false)
	th := s.thread(room)
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, "printf 'step %03d of a long script'\n", i)
	}
	tool := adapters.Tool{Name: "Bash", Input: b.String() + "echo the end", State: adapters.ToolRunning}
	ref, err := s.ad.Direct().Post(t.Context(), th, adapters.Message{Kind: adapters.KindTool, Tool: &tool})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		tool.Elapsed = time.Duration(i) * time.Second
		if err := s.ad.Direct().Edit(t.Context(), ref, adapters.Message{Kind: adapters.KindTool, Tool: &tool}); err != nil {
			t.Fatal(err)
		}
	}
	tool.State, tool.Preview = adapters.ToolOK, "done"
	if err := s.ad.Direct().Edit(t.Context(), ref, adapters.Message{Kind: adapters.KindTool, Tool: &tool}); err != nil {
		t.Fatal(err)
	}
	var msgs []dendrite.Message
	if !s.alice.WaitFor(wait, func() bool {
		msgs = s.alice.Thread(room, id.EventID(th.Thread))
		return len(msgs) == 3 && strings.HasPrefix(msgs[2].Body, "✓ **Bash** · 3s — done\n```\nprintf 'step 001")
	}) {
		t.Fatalf("want the root, the file, the finished status line; got %d messages", len(msgs))
	}
	if msgs[1].MsgType != event.MsgFile || msgs[1].Body != "bash-input.txt" || string(fileData(t, s.alice, msgs[1])) != tool.Input {
		t.Errorf("the file: %s %q", msgs[1].MsgType, msgs[1].Body)
	}
	if status := msgs[2].Body; !strings.HasSuffix(status, "the whole input is in the file above._") || strings.Contains(status, "the end") {
		t.Errorf("status line:\n%s", status)
	}
}
