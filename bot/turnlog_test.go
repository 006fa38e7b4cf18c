package bot

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// TestTurnTagInLogLines: a thread's log names its running turn while one
// is set, in loggers derived before or after it was set, and nothing once
// it is cleared; setting it while others log is race-free (run with -race).
func TestTurnTagInLogLines(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	h := slog.NewJSONHandler(lockedWriter{&buf, &mu}, nil)
	tag := new(turnTag)
	log := withTurn(slog.New(h).With("thread", "console:main"), tag)
	derived := log.With("request", "r1")

	log.Info("before")
	tag.set(42)
	log.Info("during")
	derived.Info("during, derived")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); derived.Info("concurrent") }()
	}
	wg.Wait()
	tag.set(0)
	log.Info("after")
	var nilTag *turnTag
	nilTag.set(7) // a view made without deps: no effect, no panic
	withTurn(slog.New(h), nilTag).Info("no tag")

	want := map[string]float64{"before": 0, "during": 42, "during, derived": 42, "concurrent": 42, "after": 0, "no tag": 0}
	for _, raw := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		msg := l["msg"].(string)
		got, _ := l["turn"].(float64)
		if got != want[msg] {
			t.Errorf("%q: turn = %v, want %v", msg, l["turn"], want[msg])
		}
		if msg == "during, derived" && l["request"] != "r1" {
			t.Errorf("derived logger lost its attributes: %s", raw)
		}
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
