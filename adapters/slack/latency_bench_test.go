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
				tap.inner = bc.Runner
				if tap.inner == nil {
					tap.inner = claudeproc.Local{}
				}
				bc.Runner = tap
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

// stdinTap is a claudeproc.Runner that hands the inner runner a pipe in
// place of claude's stdin and copies every line across, noting when a line
// holding an expected marker passes.
type stdinTap struct {
	inner claudeproc.Runner
	mu    sync.Mutex
	seen  map[string]chan time.Time
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

func (t *stdinTap) Start(ctx context.Context, spec claudeproc.Spec) (claudeproc.Handle, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	from := spec.Stdin
	spec.Stdin = r
	h, err := t.inner.Start(ctx, spec)
	if err != nil { // the inner runner has closed r, as a runner owns its spec's ends
		from.Close()
		w.Close()
		return nil, err
	}
	go func() {
		defer from.Close()
		defer w.Close()
		br := bufio.NewReaderSize(from, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				t.note(line, time.Now())
				if _, werr := w.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return h, nil
}
