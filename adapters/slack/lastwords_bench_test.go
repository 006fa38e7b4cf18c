package slack_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/fakeslack"

	slackadapter "github.com/claudeops/claudeops/adapters/slack"
)

// BenchmarkCompleteAfterLastToken: how long after the CLI has printed the
// last words of an answer the fake Slack holds the complete text, at the
// default 2 s edit interval (chat.update, no native stream). The answer,
// 1,200 characters in 40-character deltas 20 ms apart, fits one message.
// The times are taken outside the bot: the runner is wrapped so that
// claude's stdout passes through a pipe this benchmark reads, noting the
// last text delta, the complete assistant line, the message_stop after
// it and the turn's result (the gap a final text is held for its footer:
// outbox.Editor.Hold). One op is one turn in a live session. "budget": the adapter keeps
// Slack's real rate budgets (chat.update, Tier 3, may wait for its
// token); "unlimited": budgets ×1000, the bot's and the adapter's own path.
//
//	go test -tags goolm -run '^$' -bench CompleteAfterLastToken -benchtime 10x ./adapters/slack
func BenchmarkCompleteAfterLastToken(b *testing.B) {
	b.Run("budget", func(b *testing.B) { benchLastWords(b, 0) })
	b.Run("unlimited", func(b *testing.B) { benchLastWords(b, 1000) })
}

func benchLastWords(b *testing.B, rateScale float64) {
	tap := &stdoutTap{}
	h := newHarness(b, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		last := req.LastUserText()
		if i := strings.Index(last, "words "); i >= 0 {
			answer := longAnswer(1200) + " The end of " + strings.TrimSpace(last[i:]) + "."
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text(answer)}, ChunkSize: 40, ChunkDelay: 20 * time.Millisecond}
		}
		return text("warm.")
	}, fakeslack.Options{}, func(bc *bot.Config, sc *slackadapter.Config) {
		sc.EditInterval = 2 * time.Second
		sc.RateScale = rateScale
		tapRunner(bc, true, tap.note)
	})
	ts := h.fs.Post(alice, general, mention+"warm up")
	h.waitThread(ts, `✓ .* turns?$`)
	var fromDelta, fromAssistant, stopGap, resultGap time.Duration
	for i := 0; b.Loop(); i++ {
		tail := fmt.Sprintf("The end of words %d.", i)
		marks := tap.expect(tail)
		h.fs.Reply(alice, general, ts, mention+fmt.Sprintf("words %d", i))
		h.waitThread(ts, regexp.QuoteMeta(tail))
		shown := time.Now()
		m := marks.wait(b)
		fromDelta += shown.Sub(m.lastDelta)
		fromAssistant += shown.Sub(m.assistant)
		stopGap += m.stop.Sub(m.assistant)
		resultGap += m.result.Sub(m.assistant)
		h.waitFooters(ts, i+2) // the turn ends before the next begins
	}
	n := float64(b.N)
	b.ReportMetric(float64(fromDelta.Microseconds())/1000/n, "ms-after-last-delta")
	b.ReportMetric(float64(fromAssistant.Microseconds())/1000/n, "ms-after-assistant")
	b.ReportMetric(float64(stopGap.Microseconds())/1000/n, "ms-assistant-to-message_stop")
	b.ReportMetric(float64(resultGap.Microseconds())/1000/n, "ms-assistant-to-result")
}

// waitFooters waits until the thread holds n turns' footers.
func (h *harness) waitFooters(threadTS string, n int) {
	re := regexp.MustCompile(`✓ .* turns?$`)
	if !h.fs.WaitFor(wait, func() bool {
		k := 0
		for _, m := range h.fs.Thread(general, threadTS) {
			if m.BotID != "" && re.MatchString(m.VisibleText()) {
				k++
			}
		}
		return k >= n
	}) {
		h.t.Fatalf("fewer than %d footers in thread %s:\n%s", n, threadTS, h.dump(threadTS))
	}
}

// lastWords is when claude printed an answer's last text delta, its
// complete assistant line, the message_stop after it and the result.
type lastWords struct {
	lastDelta, assistant, stop, result time.Time
	done                               chan struct{}
}

func (m *lastWords) wait(tb testing.TB) *lastWords {
	select {
	case <-m.done:
	case <-time.After(wait):
		tb.Fatal("claude's stdout never showed the answer's result")
	}
	return m
}

// stdoutTap notes, of the lines claude prints (lineTap), when those of an
// expected answer pass.
type stdoutTap struct {
	mu        sync.Mutex
	tail      string
	lastDelta time.Time
	cur       *lastWords
}

func (t *stdoutTap) expect(tail string) *lastWords {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tail = tail
	t.cur = &lastWords{done: make(chan struct{})}
	return t.cur
}

func (t *stdoutTap) note(line []byte, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return
	}
	switch {
	case bytes.Contains(line, []byte(`"text_delta"`)):
		t.lastDelta = at
	case bytes.Contains(line, []byte(`"type":"assistant"`)) && bytes.Contains(line, []byte(t.tail)):
		t.cur.lastDelta, t.cur.assistant = t.lastDelta, at
	case bytes.Contains(line, []byte(`"message_stop"`)) && !t.cur.assistant.IsZero():
		t.cur.stop = at
	case bytes.Contains(line, []byte(`"type":"result"`)) && !t.cur.assistant.IsZero():
		t.cur.result = at
		close(t.cur.done)
		t.cur = nil
	}
}
