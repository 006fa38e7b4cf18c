package matrix_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
)

// Benchmarks against the real Dendrite and the real CLI (see
// docs/PERFORMANCE.md): go test -tags goolm -run '^$' -bench Matrix -benchtime 5x ./adapters/matrix

// BenchmarkMatrixMentionToFirstText: from alice's mention to the first
// text of the bot's answer in her client (a new thread: the CLI starts).
func BenchmarkMatrixMentionToFirstText(b *testing.B) {
	h := newHarness(b, options{mod: func(bc *bot.Config, _ *matrix.Config) { bc.MaxSessions = 64 }})
	room := h.room(false)
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		root := h.mention(h.alice, room, fmt.Sprintf("hello %d", i))
		h.waitBot(room, root, `^ok: hello`)
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-text")
}

// BenchmarkMatrixReplyToFirstText: the same within a thread whose session
// is live (no CLI start): what the bot and Matrix add to the model's time.
func BenchmarkMatrixReplyToFirstText(b *testing.B) {
	h := newHarness(b, options{})
	room := h.room(false)
	root := h.mention(h.alice, room, "warm up")
	h.waitBot(room, root, `✓ .* turn`)
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		text := fmt.Sprintf("again %d", i)
		h.alice.SendText(room, text, "", root)
		h.waitBot(room, root, `^ok: .*`+text+`$`)
		total += time.Since(start)
		// The turn ends (its footer) before the next message.
		if !h.alice.WaitFor(wait, func() bool { return len(h.botMessages(room, root, `(?m)^✓ .* turns?$`)) == i+2 }) {
			b.Fatalf("turn %d did not end:\n%s", i+2, h.dump(room, root))
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-text")
}

// BenchmarkMatrixEditsPer6000: edits the bot sends for a 6 000-character
// answer streamed at a model's pace, with the default edit interval.
func BenchmarkMatrixEditsPer6000(b *testing.B) {
	h := newHarness(b, options{mod: func(bc *bot.Config, mc *matrix.Config) {
		bc.MaxSessions = 64 // each answer is a new thread: none waits for a slot
		mc.EditInterval = 1500 * time.Millisecond
	}})
	room := h.room(false)
	edits, msgs := 0, 0
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		root := h.mention(h.alice, room, "stream 6000")
		h.waitBot(room, root, `✓ .* turn`)
		total += time.Since(start)
		want := longAnswer(6000)
		if !h.alice.WaitFor(wait, func() bool {
			for _, m := range h.alice.Thread(room, root) {
				if m.Sender == h.botUser.ID && withoutFooter(m.Body) == want {
					return true
				}
			}
			return false
		}) {
			b.Fatalf("the final text did not land:\n%s", h.dump(room, root))
		}
		for _, m := range h.alice.Thread(room, root) {
			if m.Sender == h.botUser.ID && !strings.HasPrefix(m.Body, "✓ ") {
				edits += m.Edits
				msgs++
			}
		}
	}
	b.ReportMetric(float64(edits)/float64(b.N), "edits/answer")
	b.ReportMetric(float64(msgs)/float64(b.N), "messages/answer")
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/answer")
}

// BenchmarkMatrixFinalTextVisible: from the adapter receiving a text's
// final Edit to alice's client on the real Dendrite showing that text, for
// a message whose live edits are paced at 1.5 s (the final state is urgent).
//
//	go test -tags goolm -run '^$' -bench MatrixFinalTextVisible -benchtime 10x ./adapters/matrix
func BenchmarkMatrixFinalTextVisible(b *testing.B) {
	s := newSolo(b, soloOptions{editInterval: 1500 * time.Millisecond})
	room := s.room(s.alice, false)
	th := s.thread(room)
	ctx := context.Background()
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		ref, err := s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("answer %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		_ = s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("answer %d, more", i)})
		final := fmt.Sprintf("answer %d, whole and final", i)
		start := time.Now()
		if err := s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: final, Final: true}); err != nil {
			b.Fatal(err)
		}
		if !s.alice.WaitFor(wait, func() bool { return s.message(s.alice, th, ref.ID).Body == final }) {
			b.Fatalf("the final text never showed")
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/final-visible")
}
