package slack_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// TestMemoryFlatOver10000Threads: a long-running adapter serves 10,000
// threads, each with a mention, a status, an answer streamed then final
// and the status cleared (every tenth with a prompt decided), through the fake Slack's Web API
// (events reach the adapter as the Events API would hand them over, without
// the Socket Mode round trip, to keep the test short). Its maps stay at
// their bounds, and its heap after 10,000 threads is what it was after
// 1,000 (the fake's own history is dropped before each measure).
func TestMemoryFlatOver10000Threads(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 threads")
	}
	const threads, workers, capN = 10_000, 8, 500
	s := newSoloWith(t, fakeslack.Options{NoBotEcho: true}, func(c *slack.Config) {
		c.AppToken, c.SigningSecret = "", "secret" // no socket: events are handed over below
		c.RateScale = 1e6
		c.EditInterval = time.Millisecond
	})
	s.ad.SetCaps(capN, capN)
	ctx := t.Context()
	var mu sync.Mutex
	var failed error
	turn := func(i int) {
		if err := memoryTurn(ctx, s, i); err != nil {
			mu.Lock()
			failed = err
			mu.Unlock()
		}
	}
	run := func(from, to int) {
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for i := range next {
					turn(i)
				}
			})
		}
		for i := from; i < to; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		if failed != nil {
			t.Fatal(failed)
		}
	}
	measure := func(n int) uint64 { return measureMemory(t, s, n, capN) }
	start := time.Now()
	run(0, 1000)
	at1k := measure(1000)
	run(1000, threads)
	at10k := measure(threads)
	t.Logf("%d threads in %v", threads, time.Since(start).Round(time.Millisecond))
	// Generous: the old unbounded maps grew by about 1 KiB per thread
	// (9 MiB here); noise between two measures is well under a MiB.
	const slack = 4 << 20
	if at10k > at1k+slack {
		t.Errorf("heap grew from %.1f MiB after 1,000 threads to %.1f MiB after 10,000", float64(at1k)/(1<<20), float64(at10k)/(1<<20))
	}
	s.noViolations()
}

// memoryTurn is one thread of TestMemoryFlatOver10000Threads: a mention, a
// status, an answer streamed then final, every tenth thread a prompt
// decided, and the status cleared. It returns the first error, if any, so
// the workers can record it.
func memoryTurn(ctx context.Context, s *solo, i int) error {
	root := s.fs.Post(alice, general, "a thread")
	th := adapters.ThreadRef{Platform: slack.Platform, Channel: general, Thread: root}
	err := s.ad.Mention(ctx, general, root, alice)
	if err == nil {
		err = s.ad.Direct().SetStatus(ctx, th, "is thinking…")
	}
	var ref adapters.MessageRef
	if err == nil {
		ref, err = s.ad.Direct().Post(ctx, th, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("answer %d", i)})
	}
	if err == nil {
		err = s.ad.Direct().Edit(ctx, ref, adapters.Message{Kind: adapters.KindText, Text: fmt.Sprintf("answer %d, whole", i), Final: true})
	}
	if i%10 != 0 { // a prompt in every tenth thread
		if err == nil {
			err = s.ad.Direct().SetStatus(ctx, th, "")
		}
		return err
	}
	p := adapters.Prompt{ID: fmt.Sprintf("p-%d", i), Kind: adapters.PromptApproval, Title: "Bash wants to run",
		Tool: "Bash", Detail: "$ true", Choices: choices(adapters.ChoiceAllow, adapters.ChoiceDeny)}
	var pref adapters.MessageRef
	if err == nil {
		pref, err = s.ad.Direct().Ask(ctx, th, p)
	}
	if err == nil {
		p.State, p.Outcome = adapters.PromptDecided, "Allowed by "+alice
		err = s.ad.Direct().UpdatePrompt(ctx, pref, p)
	}
	if err == nil {
		err = s.ad.Direct().SetStatus(ctx, th, "")
	}
	return err
}

// measureMemory waits for the adapter's edits to land, drops the fake's own
// history so only the adapter is measured, checks that its maps are within
// capN and returns the live heap after n threads.
func measureMemory(t *testing.T, s *solo, n, capN int) uint64 {
	t.Helper()
	if !s.fs.WaitFor(wait, s.ad.Idle) {
		t.Fatalf("after %d threads the edits never all landed", n)
	}
	s.fs.Forget()
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("after %5d threads: heap %6.1f MiB, %v", n, float64(ms.HeapAlloc)/(1<<20), s.ad.Retained())
	for name, size := range s.ad.Retained() {
		if size > capN+64 { // the editors keep what was sent within the last interval
			t.Errorf("after %d threads the adapter's %s holds %d entries (bound %d)", n, name, size, capN)
		}
	}
	return ms.HeapAlloc
}
