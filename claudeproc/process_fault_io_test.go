package claudeproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault tests of the pipes: a stderr flood, control requests never
// answered, malformed output, concurrent writers. The helpers are in
// process_fault_test.go.

func TestFaultStderrFlood(t *testing.T) {
	const keep = 16 << 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()

	p := startFake(t, fakeStderrFlood, Options{StderrBytes: keep})
	if err := p.SendText("one"); err != nil {
		t.Fatal(err)
	}
	// Turns go on while stderr floods: "one", then "two" once "one" is done.
	var results []string
	floodBytes := 0
	for len(results) < 2 || floodBytes == 0 {
		switch e := waitEvent[Event](t, p, time.Minute, nil).(type) {
		case *Result:
			results = append(results, e.Result)
			if len(results) == 1 {
				if err := p.SendText("two"); err != nil {
					t.Fatal(err)
				}
			}
		case *Unknown:
			if e.Type != "fake_flood_done" {
				t.Fatalf("unexpected line %s", e.Raw)
			}
			var v struct{ Bytes int }
			json.Unmarshal(e.Raw, &v)
			floodBytes = v.Bytes
		case *SystemInit, *StreamEvent:
		default:
			t.Fatalf("unexpected event %s", e.Kind())
		}
	}
	if strings.Join(results, ",") != "done: one,done: two" {
		t.Errorf("results %q", results)
	}
	if floodBytes < fakeFloodBytes {
		t.Fatalf("fake wrote only %d bytes to stderr", floodBytes)
	}
	info, _ := closeWithin(t, p)
	if info.Reason != "exited with code 0" {
		t.Errorf("reason %q", info.Reason)
	}
	waitEvent[*Exited](t, p, evTimeout, nil)
	expectClosed(t, p)
	elapsed := time.Since(start)

	tail := info.StderrTail
	if len(tail) > keep || len(tail) < keep/2 {
		t.Errorf("StderrTail is %d bytes, want at most (and near) %d", len(tail), keep)
	}
	// The flood ends with fakeFloodEnd, then the fake notes the stdin EOF.
	if !strings.HasSuffix(tail, fakeFloodEnd+"fake: stdin closed\n") {
		t.Errorf("StderrTail does not end with the last bytes written: ...%q", tail[max(0, len(tail)-200):])
	}
	if !strings.HasPrefix(tail, "fake: stderr flood ") {
		t.Errorf("StderrTail does not start at a line boundary: %q...", tail[:min(len(tail), 80)])
	}

	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d MiB of stderr in %s; heap growth %d KiB, allocated %d KiB in all", floodBytes>>20, elapsed.Round(time.Millisecond), growth>>10, allocated>>10)
	if growth > 4<<20 {
		t.Errorf("heap grew by %d KiB over a stderr flood", growth>>10)
	}
	// Not even transiently: the flood is never buffered or copied per
	// chunk on the heap.
	if allocated > 32<<20 {
		t.Errorf("%d MiB allocated while %d MiB of stderr went by", allocated>>20, floodBytes>>20)
	}
}

func TestFaultControlTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	p := startFake(t, fakeMuteControl, Options{RequestTimeout: timeout})

	start := time.Now()
	_, err := p.SetModel(context.Background(), "opus")
	d := time.Since(start)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("SetModel: %v, want ErrTimeout", err)
	}
	if d < timeout || d > timeout+2*time.Second {
		t.Errorf("SetModel timed out after %s, want about %s", d, timeout)
	}
	// An earlier deadline of the caller's wins, and is what the error says.
	ctx, cancel := context.WithTimeout(context.Background(), timeout/4)
	_, err = p.Interrupt(ctx, false)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
		t.Fatalf("Interrupt with a short ctx: %v, want context.DeadlineExceeded", err)
	}
	p.mu.Lock()
	n := len(p.pending)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("%d requests still pending after they timed out", n)
	}

	// The process still works; the late answers surface as events.
	if err := p.SendText("next"); err != nil {
		t.Fatal(err)
	}
	var late []string
	for i := 0; i < 2; i++ {
		cr := expectNext[*ControlResponse](t, p)
		if cr.Subtype != "success" {
			t.Errorf("late response %+v", cr)
		}
		late = append(late, cr.RequestID)
	}
	if len(late) != 2 || !strings.Contains(late[0], "set_model") || !strings.Contains(late[1], "interrupt") {
		t.Errorf("late responses for %q, want the set_model then the interrupt request", late)
	}
	if r := waitEvent[*Result](t, p, evTimeout, nil); r.Result != "done: next" {
		t.Errorf("result %q", r.Result)
	}
	if info, _ := closeWithin(t, p); info.Reason != "exited with code 0" {
		t.Errorf("reason %q", info.Reason)
	}
}

func TestFaultMalformedOutput(t *testing.T) {
	const maxLine = 64 << 10
	p := startFake(t, fakeGarbage, Options{MaxLineBytes: maxLine})
	for _, msg := range []string{"first", "second"} {
		if err := p.SendText(msg); err != nil {
			t.Fatal(err)
		}
		expectNext[*SystemInit](t, p)
		expectNext[*StreamEvent](t, p)
		if pe := expectNext[*ParseError](t, p); !bytes.Contains(pe.Line, []byte("cut off")) {
			t.Errorf("parse error line %q", pe.Line)
		}
		if u := expectNext[*Unknown](t, p); u.Type != "fake_unknown_type" {
			t.Errorf("unknown %q/%q", u.Type, u.Subtype)
		}
		tr := expectNext[*Truncated](t, p)
		if tr.Type != "user" || tr.ToolUseID != "toolu_huge" || tr.OriginalSize != fakeHugeLine {
			t.Errorf("truncated type %q tool_use_id %q size %d", tr.Type, tr.ToolUseID, tr.OriginalSize)
		}
		if len(tr.Prefix) > maxLine+100 || !bytes.HasSuffix(tr.Prefix, []byte("[truncated: original_size=1048576 bytes]")) {
			t.Errorf("truncated prefix of %d bytes ending %q", len(tr.Prefix), tr.Prefix[max(0, len(tr.Prefix)-60):])
		}
		if u := expectNext[*Unknown](t, p); u.Type != "system" || u.Subtype != "fake_new_subtype" {
			t.Errorf("unknown %q/%q", u.Type, u.Subtype)
		}
		if r := expectNext[*Result](t, p); r.Result != "done: "+msg {
			t.Errorf("result %q", r.Result)
		}
	}
	if info, _ := closeWithin(t, p); info.Reason != "exited with code 0" {
		t.Errorf("reason %q", info.Reason)
	}
	expectNext[*Exited](t, p)
	expectClosed(t, p)
}

func TestFaultConcurrentWriters(t *testing.T) {
	p := startFake(t, fakeEcho, Options{})
	c := collectEchoes(p)

	const workers, rounds = 16, 24
	// Sizes past the 64 KiB pipe buffer make the kernel split writes, so
	// unserialized writers would interleave.
	sizes := []int{10, 3000, 70 << 10, 200 << 10}
	var (
		wg   sync.WaitGroup
		sent sync.Map
	)
	errc := make(chan error, workers*rounds)
	ctx := context.Background()
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				tag := fmt.Sprintf("g%02d-i%03d", g, i)
				size := sizes[(g*rounds+i)%len(sizes)]
				if err := concurrentWrite(ctx, p, &sent, tag, g, i, size); err != nil {
					errc <- fmt.Errorf("%s: %w", tag, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	// Echoes come in stdin order: once the sentinel is back, all are.
	if err := p.SendText("sentinel"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.sentinel:
	case <-c.collected:
		t.Fatal("events ended before the sentinel came back")
	case <-time.After(evTimeout):
		t.Fatal("sentinel not echoed")
	}

	c.mu.Lock()
	nSent := 0
	sent.Range(func(k, _ any) bool {
		nSent++
		if c.echoed[k.(string)] != 1 {
			t.Errorf("message %.20q... echoed %d times", k, c.echoed[k.(string)])
		}
		return true
	})
	if len(c.echoed) != nSent {
		t.Errorf("%d distinct echoes for %d messages sent (corrupted lines?)", len(c.echoed), nSent)
	}
	if len(c.bad) > 0 {
		t.Errorf("unexpected events: %.300q", c.bad)
	}
	c.mu.Unlock()

	info, _ := closeWithin(t, p)
	// The fake exits 1 on any invalid or partial stdin line.
	if info.Reason != "exited with code 0" {
		t.Errorf("exit %s", brief(info))
	}
	select {
	case <-c.collected:
	case <-time.After(evTimeout):
		t.Fatal("events channel not closed")
	}
	t.Logf("%d messages and %d control requests from %d goroutines", nSent, workers*rounds-nSent, workers)
}

// echoCollector gathers what the fake echoes back while the writers run,
// so TestFaultConcurrentWriters can check that every message came back
// once and whole, and that nothing else did.
type echoCollector struct {
	mu        sync.Mutex
	echoed    map[string]int // echoed text: how many times
	bad       []string       // anything that is not a well-formed echo
	sentinel  chan struct{}  // closed when the "sentinel" message is echoed
	collected chan struct{}  // closed when the events channel is
}

// collectEchoes starts reading p's events into a new echoCollector.
func collectEchoes(p *Process) *echoCollector {
	c := &echoCollector{echoed: map[string]int{}, sentinel: make(chan struct{}), collected: make(chan struct{})}
	go func() {
		defer close(c.collected)
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *Unknown:
				var v struct{ Text string }
				if e.Type != "fake_echo" || json.Unmarshal(e.Raw, &v) != nil {
					c.mu.Lock()
					c.bad = append(c.bad, string(e.Raw))
					c.mu.Unlock()
					continue
				}
				if v.Text == "sentinel" {
					close(c.sentinel)
					continue
				}
				c.mu.Lock()
				c.echoed[v.Text]++
				c.mu.Unlock()
			case *Exited:
			default:
				c.mu.Lock()
				c.bad = append(c.bad, ev.Kind())
				c.mu.Unlock()
			}
		}
	}()
	return c
}

// concurrentWrite is worker g's write in round i: by turns a message of the
// given size (recorded in sent, to check its echo) or one of three control
// requests, whose response must reach this caller and no other.
func concurrentWrite(ctx context.Context, p *Process, sent *sync.Map, tag string, g, i, size int) error {
	var err error
	switch (g + i) % 4 {
	case 0:
		text := tag + "|" + strings.Repeat(string(rune('a'+(g+i)%26)), size) + "|" + tag
		sent.Store(text, true)
		err = p.SendText(text)
	case 1:
		var got string
		got, err = p.SetModel(ctx, "model-"+tag)
		if err == nil && got != "model-"+tag {
			err = fmt.Errorf("SetModel(%q) = %q: response routed to the wrong caller", "model-"+tag, got)
		}
	case 2:
		_, err = p.Interrupt(ctx, i%2 == 0)
	case 3:
		var got string
		got, err = p.SetPermissionMode(ctx, "mode-"+tag)
		if err == nil && got != "mode-"+tag {
			err = fmt.Errorf("SetPermissionMode(%q) = %q: response routed to the wrong caller", "mode-"+tag, got)
		}
	}
	return err
}
