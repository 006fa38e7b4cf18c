package slack_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

const zwsp = "\u200b"

// mentionForms: every mention syntax a model could write (Slack's "Formatting text for app surfaces").
var mentionForms = []string{
	"<!here>", "<!here|here>", "<!channel>", "<!channel|channel>", "<!everyone>", "<!everyone|everyone>",
	"<@" + bob + ">", "<@" + bob + "|bob>", "<#" + general + ">", "<#" + general + "|general>",
	"<!subteam^S0OPS1|@ops>", "@here", "@channel", "@everyone", "@HERE", "@Channel",
}

// pieceSeq is a text as it arrives: the first piece is posted, each next
// one extends it in an edit, the last edit is final.
type pieceSeq struct {
	form   string
	pieces []string
}

// splitSequences cuts "go <form> ok" in two at every byte, and in three
// at every pair of bytes in or at the edges of the form.
func splitSequences() []pieceSeq {
	var out []pieceSeq
	for _, form := range mentionForms {
		text := "go " + form + " ok"
		for i := 1; i < len(text); i++ {
			out = append(out, pieceSeq{form, []string{text[:i], text[i:]}})
		}
		lo, hi := len("go "), len("go ")+len(form)
		for i := lo; i <= hi; i++ {
			for j := i + 1; j <= hi; j++ {
				out = append(out, pieceSeq{form, []string{text[:i], text[i:j], text[j:]}})
			}
		}
	}
	return out
}

// askedThread: alice mentions the bot; once the adapter has seen it (so
// a stream there has its recipient), the thread.
func askedThread(t *testing.T, s *solo) adapters.ThreadRef {
	t.Helper()
	ts := s.fs.Post(alice, general, mention+"go")
	if !s.fs.WaitFor(wait, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, ev := range s.events {
			if ev.Thread.Thread == ts {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the mention never reached the adapter")
	}
	return adapters.ThreadRef{Platform: slack.Platform, Channel: general, Thread: ts}
}

// TestSplitMentionsNeverLive: model text carrying a mention, cut at every
// byte into two pieces and at every pair of bytes into three, posted and
// extended as the bot does (live text, then the final one), in both
// streaming modes. The oracle is the fake's: after every call, what the
// message shows (for a native stream, every appended piece concatenated
// as Slack concatenates them) holds no live mention (ForbidMentions), and
// at the end it reads as the whole text, nothing lost.
func TestSplitMentionsNeverLive(t *testing.T) {
	seqs := splitSequences()
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			s := newSoloWith(t, fakeslack.Options{Streaming: streaming, ForbidMentions: true, NoBotEcho: true},
				func(c *slack.Config) { c.Streaming, c.RateScale = streaming, 1000 })
			th := askedThread(t, s)
			ctx := t.Context()
			work := make(chan pieceSeq)
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for sq := range work {
						checkPieces(ctx, t, s, th, sq)
					}
				}()
			}
			for _, sq := range seqs {
				work <- sq
			}
			close(work)
			wg.Wait()
			if n := len(s.fs.Calls("chat.startStream")); streaming && n != len(seqs) {
				t.Errorf("%d streams for %d texts: the native stream was not used throughout", n, len(seqs))
			}
			s.noViolations()
		})
	}
}

// checkPieces sends one sequence and checks what its message finally shows.
func checkPieces(ctx context.Context, t *testing.T, s *solo, th adapters.ThreadRef, sq pieceSeq) {
	text := sq.pieces[0]
	ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: text})
	if err != nil {
		t.Errorf("%q: post: %v", sq.pieces, err)
		return
	}
	for k := 1; k < len(sq.pieces); k++ {
		text += sq.pieces[k]
		m := adapters.Message{Kind: adapters.KindText, Text: text, Final: k == len(sq.pieces)-1}
		if err := slack.EditNow(s.ad, ctx, ref, m); err != nil {
			t.Errorf("%q: edit %d: %v", sq.pieces, k, err)
			return
		}
	}
	m, ok := s.fs.Message(th.Channel, ref.ID)
	switch {
	case !ok:
		t.Errorf("%q: message %s gone", sq.pieces, ref.ID)
	case m.Streaming:
		t.Errorf("%q: the stream was left open", sq.pieces)
	case len(m.LiveMentions()) > 0:
		t.Errorf("%q: shows live %q: %q", sq.pieces, m.LiveMentions(), m.VisibleText())
	case !strings.Contains(strings.ReplaceAll(m.VisibleText(), zwsp, ""), text):
		t.Errorf("%q: shows %q, not the whole text", sq.pieces, m.VisibleText())
	}
}

// TestModelSplitMentionE2E: the real CLI streams, from the fake model, an
// answer whose mentions arrive cut across text deltas of two characters;
// the bot shows it live (natively streamed or edited) and the fake Slack
// checks every state of every message for live mentions.
func TestModelSplitMentionE2E(t *testing.T) {
	answer := "Heads up <!here> and <!channel|channel>, <@" + bob + "> and <#" + general + ">: @here @everyone <!subteam^S0OPS1|@ops> done"
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			h := newHarness(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
				return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text(answer)}, ChunkSize: 2, ChunkDelay: 15 * time.Millisecond}
			}, fakeslack.Options{Streaming: streaming, ForbidMentions: true}, func(_ *bot.Config, c *slack.Config) {
				c.EditInterval = 10 * time.Millisecond
			})
			ts := h.fs.Post(alice, general, mention+"tell everyone")
			m := h.waitFinal(ts, `^Heads up`)
			if got := strings.ReplaceAll(m.VisibleText(), zwsp, ""); !strings.Contains(got, answer) {
				t.Errorf("the answer shows as %q", m.VisibleText())
			}
			if live := m.LiveMentions(); len(live) > 0 {
				t.Errorf("live %q in %q", live, m.VisibleText())
			}
			if streaming {
				pieces := streamPieces(h.fs, m.TS)
				if len(pieces) < 5 {
					t.Errorf("the answer went out in %d pieces: not streamed", len(pieces))
				}
				if !splitInsideEntity(pieces) {
					t.Errorf("no piece boundary fell inside a <…> mention: the test proved nothing (pieces %q)", pieces)
				}
			} else if n := len(h.fs.Calls("chat.update")); n < 3 {
				t.Errorf("%d updates: the answer was not shown live", n)
			}
			h.noViolations()
		})
	}
}

// waitFinal waits until a bot message of the thread matching pattern is
// complete: its stream stopped, its Stop control gone, the footer posted
// (an edit is queued before the footer is posted, so it may land after).
func (h *harness) waitFinal(threadTS, pattern string) fakeslack.Message {
	h.t.Helper()
	h.waitThread(threadTS, `✓ .* turns?$`)
	re := regexp.MustCompile(pattern)
	var found fakeslack.Message
	if !h.fs.WaitFor(wait, func() bool {
		for _, m := range h.fs.Thread(general, threadTS) {
			if m.BotID != "" && re.MatchString(m.VisibleText()) && !m.Streaming && len(m.ActionIDs()) == 0 {
				found = m
				return true
			}
		}
		return false
	}) {
		h.t.Fatalf("no complete bot message matching %q:\n%s", pattern, h.dump(threadTS))
	}
	return found
}

// streamPieces are the markdown_text pieces sent to stream ts, in order.
func streamPieces(fs *fakeslack.Server, ts string) []string {
	var out []string
	for _, c := range fs.Calls("") {
		switch {
		case c.Method == "chat.startStream" && c.Error == "" && len(out) == 0:
			out = append(out, c.Param("markdown_text"))
		case (c.Method == "chat.appendStream" || c.Method == "chat.stopStream") && c.Param("ts") == ts && c.Param("markdown_text") != "":
			out = append(out, c.Param("markdown_text"))
		}
	}
	return out
}

// splitInsideEntity: some boundary between pieces falls strictly inside a
// "<…>" of the concatenated text.
func splitInsideEntity(pieces []string) bool {
	all := strings.Join(pieces, "")
	at := 0
	for _, p := range pieces[:len(pieces)-1] {
		at += len(p)
		open := strings.LastIndexByte(all[:at], '<')
		if open >= 0 && !strings.Contains(all[open:at], ">") && strings.Contains(all[at:], ">") {
			return true
		}
	}
	return false
}

// TestMentionDenseTextFits: making mentions inert adds a character to
// each, so a text dense with them grows; it is split after that, never
// past Slack's 12,000 characters of markdown per message (the fake
// answers msg_too_long / invalid_blocks past it: a violation), and every
// character still shows.
func TestMentionDenseTextFits(t *testing.T) {
	text := strings.Repeat("<!here>@here", 900) + " end" // 10,804 characters, 12,604 once inert
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			s := newSoloWith(t, fakeslack.Options{Streaming: streaming, ForbidMentions: true, NoBotEcho: true},
				func(c *slack.Config) { c.Streaming, c.RateScale = streaming, 1000 })
			th := askedThread(t, s)
			ctx := t.Context()
			half := text[:len(text)/2]
			ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: half})
			if err != nil {
				t.Fatal(err)
			}
			if err := slack.EditNow(s.ad, ctx, ref, adapters.Message{Kind: adapters.KindText, Text: text, Final: true}); err != nil {
				t.Fatal(err)
			}
			var shown strings.Builder
			for _, m := range s.botMessages(th) {
				if len(m.LiveMentions()) > 0 {
					t.Errorf("live mentions in %s", m.TS)
				}
				if m.MarkdownText != "" {
					shown.WriteString(m.MarkdownText)
					continue
				}
				var blocks []struct{ Type, Text string }
				_ = jsonUnmarshal(m.Blocks, &blocks)
				for _, b := range blocks {
					if b.Type == "markdown" {
						shown.WriteString(b.Text)
					}
				}
			}
			if got := strings.ReplaceAll(shown.String(), zwsp, ""); got != text {
				t.Errorf("the messages show %d characters of %d", len(got), len(text))
			}
			s.noViolations()
		})
	}
}
