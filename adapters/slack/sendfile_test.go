package slack_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// Hostile input for a posted file: a name that climbs directories and
// breaks its line, a comment with every kind of ping and a link.
const (
	hostileName    = "../../x\n<!here>.md"
	hostileComment = "<!channel> @room <@U123> [x](https://evil) @here <!subteam^S1> <#C0GENERAL1>"
)

// TestPostFileInThread: a file lands in the thread, after what the bot
// posted there before, with exactly the bytes sent, a safe name and its
// comment shown literally; nothing in it pings anyone. The oracle is the
// fake Slack: what it stored and its own live-mention flags
// (ForbidMentions makes any live mention a violation).
func TestPostFileInThread(t *testing.T) {
	s := newSoloWith(t, fakeslack.Options{ForbidMentions: true}, nil)
	ctx := t.Context()
	th := s.thread()
	s.fs.Reply(alice, general, th.Thread, "send me the report")
	before, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: "Here it comes.", Final: true})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i * 7) // every byte value, NUL and invalid UTF-8 included
	}
	ref, err := s.ad.Direct().PostFile(ctx, th, adapters.OutFile{Name: hostileName, Data: data, Comment: hostileComment})
	if err != nil {
		t.Fatal(err)
	}

	msgs := s.fs.Thread(general, th.Thread)
	if len(msgs) != 4 {
		t.Fatalf("the thread holds %d messages, want root, reply, text, file:\n%+v", len(msgs), msgs)
	}
	if msgs[2].TS != before.ID {
		t.Errorf("message 3 is %s, want the text posted before the file (%s)", msgs[2].TS, before.ID)
	}
	share := msgs[3]
	if len(share.Files) != 1 {
		t.Fatalf("the last message has %d files, want 1: %+v", len(share.Files), share)
	}
	f := share.Files[0]
	if !bytes.Equal(f.Content, data) || f.Size != len(data) {
		t.Errorf("uploaded %d bytes (declared %d), want the %d sent, byte for byte", len(f.Content), f.Size, len(data))
	}
	if want := "x_<!here>.md"; f.Name != want || f.Title != want {
		t.Errorf("name %q, title %q; want %q for both", f.Name, f.Title, want)
	}
	if f.ThreadTS != th.Thread || f.Channel != general || ref.ID != f.ID {
		t.Errorf("file %s shared in %s/%s, ref %s; want thread %s, ref the file", f.ID, f.Channel, f.ThreadTS, ref.ID, th.Thread)
	}
	for _, m := range s.fs.Messages(general) {
		if len(m.Files) > 0 {
			t.Errorf("the file shows at the channel's top level too: %s", m.TS)
		}
	}
	if !strings.Contains(share.Text, "[x](https://evil)") {
		t.Errorf("the comment is not shown as written: %q", share.Text)
	}
	for _, m := range msgs {
		if live := m.LiveMentions(); m.BotID != "" && len(live) > 0 {
			t.Errorf("bot message %s shows live mentions %q: %q", m.TS, live, m.Text)
		}
	}
	s.noViolations()
}

// TestPostFileOverLimit: a file over the cap is refused and nothing
// reaches Slack; an empty one likewise.
func TestPostFileOverLimit(t *testing.T) {
	s := newSoloWith(t, fakeslack.Options{}, nil)
	ctx := t.Context()
	th := s.thread()
	max := s.ad.MaxFileBytes(ctx)
	if max != 100<<20 {
		t.Errorf("MaxFileBytes = %d, want the adapter's 100 MiB", max)
	}
	for _, n := range []int64{max + 1, 0} {
		if _, err := s.ad.Direct().PostFile(ctx, th, adapters.OutFile{Name: "big.bin", Data: make([]byte, n)}); err == nil {
			t.Errorf("a file of %d bytes was taken", n)
		}
	}
	for _, m := range []string{"files.getUploadURLExternal", "files.completeUploadExternal"} {
		if calls := s.fs.Calls(m); len(calls) != 0 {
			t.Errorf("%d calls of %s for a refused file", len(calls), m)
		}
	}
	if msgs := s.fs.Thread(general, th.Thread); len(msgs) != 1 {
		t.Errorf("the thread holds %d messages, want the root alone", len(msgs))
	}
	s.noViolations()
}
