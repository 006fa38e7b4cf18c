package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/outbox"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// Benchmarks of the bot's own overhead, recorded in docs/PERFORMANCE.md:
//
//	go test -run '^$' -bench 'StreamedDelta|IdleThread' -benchmem -count 5 ./bot/
//
// Nothing here starts a process: deltas are handed to the worker directly,
// and the idle-thread benchmark uses a scripted stand-in for claude.

// benchAdapter is a chat platform that does nothing but count.
type benchAdapter struct {
	posts   atomic.Int64
	edits   atomic.Int64
	footers atomic.Int64
	bytes   atomic.Int64 // text carried by edits
}

func (a *benchAdapter) Name() string { return "bench" }

func (a *benchAdapter) Run(ctx context.Context, _ func(context.Context, adapters.Event) error) error {
	<-ctx.Done()
	return nil
}

func (a *benchAdapter) Post(_ context.Context, t adapters.ThreadRef, m adapters.Message) (adapters.MessageRef, error) {
	a.posts.Add(1)
	if m.Kind == adapters.KindFooter {
		a.footers.Add(1)
	}
	return adapters.MessageRef{Thread: t, ID: "1"}, nil
}

func (a *benchAdapter) Edit(_ context.Context, _ adapters.MessageRef, m adapters.Message) error {
	a.edits.Add(1)
	a.bytes.Add(int64(len(m.Text)))
	return nil
}

func (a *benchAdapter) Ask(_ context.Context, t adapters.ThreadRef, _ adapters.Prompt) (adapters.MessageRef, error) {
	return adapters.MessageRef{Thread: t, ID: "1"}, nil
}

func (a *benchAdapter) UpdatePrompt(context.Context, adapters.MessageRef, adapters.Prompt) error {
	return nil
}

var _ adapters.Adapter = (*benchAdapter)(nil)

// benchOutbox is the benchAdapter behind a mailroom, as the Slack and
// Matrix adapters are: the worker's calls queue and return, and the
// benchAdapter sees what the lanes made of them.
type benchOutbox struct{ *outbox.Mailroom }

func (benchOutbox) Name() string { return "bench" }

func (benchOutbox) Run(ctx context.Context, _ func(context.Context, adapters.Event) error) error {
	<-ctx.Done()
	return nil
}

// benchDeltas are text_delta pieces of the size the CLI streams (a few
// tokens, ~40 bytes), all different.
var benchDeltas = func() []string {
	words := strings.Fields("the worker renders streamed text into a live chat message and edits it as more arrives while tools run in the background of this thread")
	out := make([]string, 256)
	for i := range out {
		var sb strings.Builder
		for j := i; sb.Len() < 36; j += 7 {
			sb.WriteString(words[j%len(words)])
			sb.WriteByte(' ')
		}
		out[i] = sb.String()
	}
	return out
}()

func benchDeltaEvents(msgID string) []*claudeproc.StreamEvent {
	evs := make([]*claudeproc.StreamEvent, len(benchDeltas))
	for i, d := range benchDeltas {
		evs[i] = &claudeproc.StreamEvent{
			APIMessageID: msgID, EventType: "content_block_delta", DeltaType: "text_delta", Delta: d,
		}
	}
	return evs
}

// benchBot is a bot over a fresh store with a benchAdapter.
func benchBot(b *testing.B, cfg Config) (*Bot, *benchAdapter) {
	b.Helper()
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	if cfg.Workdir == "" {
		cfg.Workdir = b.TempDir()
	}
	if cfg.AllowedUsers == nil {
		cfg.AllowedUsers = []string{"bench-user"}
	}
	if cfg.Extensions == nil {
		// The extensions cmd gives every bot (no repository bound).
		tc := testConfig{Config: cfg}
		cfg = tc.bot(st)
	}
	bt := New(cfg, st)
	ad := &benchAdapter{}
	bt.AddAdapter(benchOutbox{outbox.NewMailroom(ad, nil)})
	b.Cleanup(func() {
		bt.shutdown()
		_ = st.Close()
	})
	return bt, ad
}

// benchLiveWorker is a worker with a running turn, as after a prompt was
// sent; no goroutine runs it: the benchmark is its goroutine.
func benchLiveWorker(b *testing.B) (*worker, *benchAdapter) {
	b.Helper()
	bt, ad := benchBot(b, Config{})
	w := newWorker(bt, adapters.ThreadRef{Platform: "bench", Channel: "C1", Thread: "T1"})
	w.view.begin("explain the design")
	b.Cleanup(w.view.stopTicker)
	return w, ad
}

// BenchmarkStreamedDelta is the bot's cost of one text_delta of a live turn:
// worker.handleProc → onStream → flush → the mailroom's Edit (which queues
// it; the platform's own editor coalesces and paces, so the bot does not).
// One op is one delta (~40 bytes). It does not include decoding the line
// (claudeproc's BenchmarkReaderSmallStreamEvents) nor the platform's edit;
// edits/op counts what reached the adapter after the mailroom collapsed
// the edits that queued behind one another.
//
// turn=200deltas: a turn ends (final flush) every 200 deltas and a new one
// begins, so the text grows from 0 to ~8 KB.
//
// accumulated=N: the message already holds N bytes (it is set back to N
// every 16 deltas), to show how the cost of a delta grows with the text.
func BenchmarkStreamedDelta(b *testing.B) {
	b.Run("turn=200deltas", benchTurnDeltas)
	for _, size := range []int{1 << 10, 8 << 10, 32 << 10} {
		b.Run(fmt.Sprintf("accumulated=%dKB", size>>10), func(b *testing.B) {
			benchAccumulatedDeltas(b, size)
		})
	}
}

func benchTurnDeltas(b *testing.B) {
	const perTurn = 200
	w, ad := benchLiveWorker(b)
	ctx := context.Background()
	evs := benchDeltaEvents("msg_bench")
	qp := &queuedPrompt{text: "explain the design"}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		w.handleProc(ctx, evs[n%len(evs)])
		n++
		if n%perTurn == 0 {
			w.view.flush(ctx, true)
			w.view.turn = nil
			w.view.begin(qp.text)
		}
	}
	benchReportAdapter(b, ad, n)
}

func benchAccumulatedDeltas(b *testing.B, size int) {
	const perReset = 16
	w, ad := benchLiveWorker(b)
	ctx := context.Background()
	base := strings.Repeat("0123456789abcdef", size/16)
	start := &claudeproc.StreamEvent{
		APIMessageID: "msg_bench", EventType: "content_block_start",
		Block: &claudeproc.ContentBlock{Type: "text", Text: base},
	}
	evs := benchDeltaEvents("msg_bench")
	w.handleProc(ctx, start)
	w.view.flush(ctx, false) // posts the message; deltas then edit it
	if lt := w.view.turn.texts["msg_bench"]; lt == nil || lt.ref == nil {
		b.Fatal("the live text was not posted")
	}
	ad.posts.Store(0)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		w.handleProc(ctx, evs[n%len(evs)])
		n++
		if n%perReset == 0 {
			w.handleProc(ctx, start)
		}
	}
	benchReportAdapter(b, ad, n)
}

func benchReportAdapter(b *testing.B, ad *benchAdapter, n int) {
	b.Helper()
	edits := ad.edits.Load()
	b.ReportMetric(float64(edits)/float64(n), "edits/op")
	if edits > 0 {
		b.ReportMetric(float64(ad.bytes.Load())/float64(edits), "B/edit")
	}
	if n > 1 && edits == 0 {
		b.Fatal("no delta reached the adapter's Edit")
	}
}

// benchProc stands in for a claude process: each prompt gets a scripted
// turn (init, a streamed 2 KB answer, the assistant line, a result).
type benchProc struct {
	session string
	events  chan claudeproc.Event
	once    sync.Once
	closes  *atomic.Int64
}

func (p *benchProc) Events() <-chan claudeproc.Event { return p.events }

func (p *benchProc) Send(claudeproc.UserMessage) error {
	const id = "msg_bench"
	meta := claudeproc.Meta{SessionID: p.session}
	p.events <- &claudeproc.SystemInit{Meta: meta, Model: "claude-bench"}
	p.events <- &claudeproc.StreamEvent{Meta: meta, APIMessageID: id, EventType: "content_block_start",
		Block: &claudeproc.ContentBlock{Type: "text"}}
	var text strings.Builder
	for _, d := range benchDeltas[:50] {
		text.WriteString(d)
		p.events <- &claudeproc.StreamEvent{Meta: meta, APIMessageID: id, EventType: "content_block_delta",
			DeltaType: "text_delta", Delta: d}
	}
	block := claudeproc.ContentBlock{Type: "text", Text: text.String()}
	p.events <- &claudeproc.StreamEvent{Meta: meta, APIMessageID: id, EventType: "content_block_stop", Block: &block}
	p.events <- &claudeproc.Assistant{Meta: meta, MessageID: id, Block: block, Blocks: []claudeproc.ContentBlock{block}}
	p.events <- &claudeproc.Result{Meta: meta, Subtype: "success", NumTurns: 1, DurationMS: 1200, TotalCostUSD: 0.01,
		Usage: claudeproc.Usage{InputTokens: 1000, OutputTokens: 500}}
	return nil
}

func (p *benchProc) Allow(string, json.RawMessage, []claudeproc.PermissionUpdate) error { return nil }
func (p *benchProc) Deny(string, string, bool) error                                    { return nil }
func (p *benchProc) Interrupt(context.Context, bool) (claudeproc.InterruptResult, error) {
	return claudeproc.InterruptResult{}, nil
}
func (p *benchProc) SetPermissionMode(_ context.Context, m string) (string, error) { return m, nil }
func (p *benchProc) SetModel(_ context.Context, m string) (string, error)          { return m, nil }

func (p *benchProc) RespondMCP(string, json.RawMessage) error { return nil }

func (p *benchProc) Close(context.Context) claudeproc.ExitInfo {
	p.once.Do(func() {
		close(p.events)
		p.closes.Add(1)
	})
	return claudeproc.ExitInfo{Reason: "exited 0"}
}

// benchLogCounter counts "claude stopped" records: the last thing a worker
// does when its process is reaped.
type benchLogCounter struct{ stopped atomic.Int64 }

func (h *benchLogCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *benchLogCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "claude stopped" {
		h.stopped.Add(1)
	}
	return nil
}
func (h *benchLogCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *benchLogCounter) WithGroup(string) slog.Handler      { return h }

// BenchmarkIdleThread measures what the bot keeps for a thread that is idle:
// N threads each get one message (each from its own user) through
// Bot.toWorker (the path Deliver takes) and are waited for until idle; the heap (after GC) and the
// goroutine stacks are compared with before, divided by N.
//
//   - help: the message is the `help` command; no process is involved.
//   - conversation: the message is a prompt; a scripted process answers it
//     (a 2 KB streamed reply and a result) and is reaped after IdleTimeout,
//     as a real idle session is.
//
// Metrics: B/thread is heap+stack per idle thread whose worker still
// lingers (workerLinger); heapB/thread and stackB/thread split it;
// goroutines/thread should be 1. B/exited-thread is the heap left once the
// workers have exited (their goroutines, and so their stacks, are gone). Exiting is hastened by firing each worker's idle
// timer early (workerLinger is a constant); that is the exit path the
// timer takes anyway.
func BenchmarkIdleThread(b *testing.B) {
	// Most of an idle worker's heap is its mailbox's buffer, made at full
	// capacity: say how much that is.
	size := unsafe.Sizeof(input{})
	b.Logf("mailbox buffer: %d inputs × %d B = %d B per worker", benchMailboxSize(), size, uintptr(benchMailboxSize())*size)
	b.Run("help", func(b *testing.B) { benchIdleThreads(b, false) })
	b.Run("conversation", func(b *testing.B) { benchIdleThreads(b, true) })
}

const benchThreads = 1000

func benchIdleThreads(b *testing.B, conversation bool) {
	var lingering, heap, stack, gor, exited, allocB, allocs float64
	for range b.N {
		r := benchIdleBatch(b, conversation)
		lingering += r.heap + r.stack
		heap += r.heap
		stack += r.stack
		gor += r.goroutines
		exited += r.exited
		allocB += r.allocBytes
		allocs += r.allocs
	}
	n := float64(b.N)
	// An op here is one thread taken from its message to idle: ns/op would
	// be mostly SQLite, so it is left out; B/op and allocs/op are what the
	// bot allocated (transiently) per thread.
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(allocB/n, "B/op")
	b.ReportMetric(allocs/n, "allocs/op")
	b.ReportMetric(lingering/n, "B/thread")
	b.ReportMetric(heap/n, "heapB/thread")
	b.ReportMetric(stack/n, "stackB/thread")
	b.ReportMetric(gor/n, "goroutines/thread")
	b.ReportMetric(exited/n, "B/exited-thread")
}

type benchIdleResult struct {
	heap, stack, goroutines, exited, allocBytes, allocs float64 // per thread
}

func benchIdleBatch(b *testing.B, conversation bool) benchIdleResult {
	const warm = 50
	logs := &benchLogCounter{}
	var closes atomic.Int64
	cfg := Config{
		MaxSessions: benchThreads + warm,
		IdleTimeout: 20 * time.Millisecond,
		Logger:      slog.New(logs),
	}
	bt, ad := benchBot(b, cfg)
	bt.start = func(_ context.Context, o claudeproc.Options) (process, error) {
		s := o.SessionID
		if s == "" {
			s = o.Resume
		}
		return &benchProc{session: s, events: make(chan claudeproc.Event, 128), closes: &closes}, nil
	}
	text := "help"
	if conversation {
		text = "explain the design of this repository"
	}
	batch := func(prefix string, n int) {
		for i := range n {
			t := adapters.ThreadRef{Platform: "bench", Channel: "C1", Thread: fmt.Sprintf("%s%04d", prefix, i)}
			// A user of their own per thread: the per-user cap
			// (MaxThreadsPerUser, 3) is in force, as in production.
			user := adapters.User{ID: fmt.Sprintf("bench-user-%s%04d", prefix, i), Name: "Bench"}
			ok := bt.toWorker(t.Key(), input{kind: inEvent, ev: adapters.Event{
				Thread: t, User: user,
				Message: &adapters.Incoming{ID: t.Thread, Text: text, Mentioned: true},
			}})
			if !ok {
				b.Fatal("toWorker refused a message")
			}
		}
	}
	// done waits until total threads have finished: the help was posted, or
	// the process was reaped and the worker recorded it.
	done := func(total int64) {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if conversation {
				if closes.Load() == total && logs.stopped.Load() == total && bt.LiveSessions() == 0 {
					return
				}
			} else if ad.posts.Load() == total {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		b.Fatalf("threads did not go idle: posts %d, closes %d, stopped %d, want %d",
			ad.posts.Load(), closes.Load(), logs.stopped.Load(), total)
	}
	// Warm up: the store's connections, the loggers, the runtime's caches.
	batch("warm", warm)
	done(warm)
	benchExitWorkers(b, bt)

	m0, g0 := benchMem()
	batch("t", benchThreads)
	done(warm + benchThreads)
	time.Sleep(50 * time.Millisecond) // the workers' last steps after the post or log
	m1, g1 := benchMem()
	benchExitWorkers(b, bt)
	m2, _ := benchMem()

	per := func(after, before uint64) float64 {
		return (float64(after) - float64(before)) / benchThreads
	}
	return benchIdleResult{
		heap:       per(m1.HeapAlloc, m0.HeapAlloc),
		stack:      per(m1.StackInuse, m0.StackInuse),
		goroutines: float64(g1-g0) / benchThreads,
		exited:     per(m2.HeapAlloc, m0.HeapAlloc), // no goroutine, no stack
		allocBytes: per(m1.TotalAlloc, m0.TotalAlloc),
		allocs:     per(m1.Mallocs, m0.Mallocs),
	}
}

func benchMailboxSize() int {
	var c Config
	c.defaults()
	return c.MailboxSize
}

func benchMem() (runtime.MemStats, int) {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m, runtime.NumGoroutine()
}

// benchExitWorkers makes every idle worker exit now instead of after
// workerLinger, by firing its idle timer early, and waits until their
// goroutines have ended.
func benchExitWorkers(b *testing.B, bt *Bot) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		bt.mu.Lock()
		ws := make([]*worker, 0, len(bt.workers))
		for _, w := range bt.workers {
			ws = append(ws, w)
		}
		bt.mu.Unlock()
		if len(ws) == 0 {
			bt.wg.Wait()
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d workers did not exit", len(ws))
		}
		for _, w := range ws {
			// The worker set idleTimer before it handled its message, which
			// happened before we saw it idle; Timer is safe for concurrent use.
			w.idleTimer.Reset(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
