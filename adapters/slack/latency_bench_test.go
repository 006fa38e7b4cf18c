package slack_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeslack"

	slackadapter "github.com/claudeops/claudeops/adapters/slack"
)

// BenchmarkMessageToPrompt is the time from a Slack message reaching the
// adapter (the fake's Socket Mode push) to its prompt line being written to
// claude's stdin, in a thread whose session is live. The time is taken
// outside the bot: the runner is wrapped so that claude's stdin passes
// through a pipe this test reads. "status held": Slack does not answer
// assistant.threads.setStatus at all, and the figure must not change,
// since nothing on a platform's API may sit between the two.
func BenchmarkMessageToPrompt(b *testing.B) {
	for _, held := range []bool{false, true} {
		name := "status answered"
		if held {
			name = "status held"
		}
		b.Run(name, func(b *testing.B) {
			tap := &stdinTap{seen: map[string]chan time.Time{}}
			h := newHarness(b, script(nil), fakeslack.Options{}, func(bc *bot.Config, _ *slackadapter.Config) {
				tapRunner(bc, false, tap.note)
			})
			ts := h.fs.Post(alice, general, mention+"warm up")
			h.waitThread(ts, `✓ .* turns?$`)
			if held {
				hold := h.fs.Hold(setStatus)
				defer hold.Release()
			}
			var total time.Duration
			for i := 0; b.Loop(); i++ {
				marker := fmt.Sprintf("probe-%d-%d", i, time.Now().UnixNano())
				seen := tap.expect(marker)
				start := time.Now()
				h.fs.Reply(alice, general, ts, mention+marker)
				select {
				case at := <-seen:
					total += at.Sub(start)
				case <-time.After(wait):
					b.Fatalf("prompt %s never reached claude's stdin", marker)
				}
				h.waitThread(ts, "ok: "+marker)
				h.waitThread(ts, `✓ .* turns?$`)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-stdin")
		})
	}
}

// stdinTap notes, of the lines written to claude's stdin (lineTap), when
// one holding an expected marker passes.
type stdinTap struct {
	mu   sync.Mutex
	seen map[string]chan time.Time
}

func (t *stdinTap) expect(marker string) <-chan time.Time {
	c := make(chan time.Time, 1)
	t.mu.Lock()
	t.seen[marker] = c
	t.mu.Unlock()
	return c
}

func (t *stdinTap) note(line []byte, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for m, c := range t.seen {
		if bytes.Contains(line, []byte(m)) {
			c <- at
			delete(t.seen, m)
		}
	}
}

// lineTap is a claudeproc.Runner that passes one of claude's pipes, its
// stdin or (stdout set) its stdout, through a pipe of its own, telling
// note of every line as it passes.
type lineTap struct {
	inner  claudeproc.Runner
	stdout bool
	note   func(line []byte, at time.Time)
}

// tapRunner wraps the bot's runner (claudeproc.Local when none is set).
func tapRunner(bc *bot.Config, stdout bool, note func([]byte, time.Time)) {
	inner := bc.Runner
	if inner == nil {
		inner = claudeproc.Local{}
	}
	bc.Runner = &lineTap{inner: inner, stdout: stdout, note: note}
}

func (t *lineTap) Start(ctx context.Context, spec claudeproc.Spec) (claudeproc.Handle, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	var from, to *os.File // the ends this tap relays between
	if t.stdout {
		from, to = r, spec.Stdout
		spec.Stdout = w // claude writes w
	} else {
		from, to = spec.Stdin, w
		spec.Stdin = r // claude reads r
	}
	h, err := t.inner.Start(ctx, spec)
	if err != nil { // the inner runner has closed its end, as a runner owns its spec's ends
		from.Close()
		to.Close()
		return nil, err
	}
	go relayLines(from, to, t.note)
	return h, nil
}

// relayLines copies r to w line by line, telling note of each line as it
// passes, until either end fails; then it closes both.
func relayLines(r, w *os.File, note func([]byte, time.Time)) {
	defer r.Close()
	defer w.Close()
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			note(line, time.Now())
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
