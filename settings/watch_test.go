package settings

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// watched is a Watcher over a file, polled every 5 ms, with what it told
// counted.
type watched struct {
	t        *testing.T
	path     string
	r        *Resolver
	refused  chan error
	applied  chan struct{}
	reload   chan struct{}
	refusals atomic.Int32
}

func watch(t *testing.T, first string, settle time.Duration) *watched {
	t.Helper()
	path := t.TempDir() + "/s.yaml"
	if err := os.WriteFile(path, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	return watchAt(t, path, settle)
}

// watchAt watches the file at path as it is.
func watchAt(t *testing.T, path string, settle time.Duration) *watched {
	t.Helper()
	w := &watched{t: t, path: path, r: New(Layer{}, nil), refused: make(chan error, 100), applied: make(chan struct{}, 100), reload: make(chan struct{})}
	l, sum, err := Load(w.path)
	if err != nil {
		t.Fatal(err)
	}
	w.r.SetFile(l)
	wt := &Watcher{Resolver: w.r, Path: w.path, Interval: 5 * time.Millisecond, Log: discard(), Last: sum, Settle: settle, Reload: w.reload,
		Refused: func(err error) { w.refusals.Add(1); w.refused <- err }, Applied: func() { w.applied <- struct{}{} }}
	go wt.Run(t.Context())
	return w
}

func (w *watched) write(s string) {
	w.t.Helper()
	if err := os.WriteFile(w.path, []byte(s), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *watched) model() string {
	return w.r.Get(Where{Platform: "console", Channel: "console"}, Model).Text
}

func (w *watched) wantRefused(substr string) {
	w.t.Helper()
	select {
	case err := <-w.refused:
		if !strings.Contains(err.Error(), substr) {
			w.t.Errorf("refused: %v, want %q", err, substr)
		}
	case <-time.After(10 * time.Second):
		w.t.Fatalf("not refused (want %q)", substr)
	}
}

func (w *watched) wantApplied() {
	w.t.Helper()
	select {
	case <-w.applied:
	case <-time.After(10 * time.Second):
		w.t.Fatal("not applied")
	}
}

// TestWatcherSaysEachRefusalOnce: a file gone, a bad content, is said
// once, not at every look; a bad content refused, then a good one, then the bad one again is
// said again (the running settings changed in between).
func TestWatcherSaysEachRefusalOnce(t *testing.T) {
	w := watch(t, "bot: {model: one}\n", 20*time.Millisecond)
	if err := os.Remove(w.path); err != nil {
		t.Fatal(err)
	}
	w.wantRefused("no such file")
	time.Sleep(100 * time.Millisecond) // twenty looks
	if n := w.refusals.Load(); n != 1 {
		t.Errorf("a file gone said %d times, want once", n)
	}
	bad := "bot: {model: two, colour: red}\n"
	w.write(bad)
	w.wantRefused(`unknown setting "colour"`)
	time.Sleep(100 * time.Millisecond)
	if n := w.refusals.Load(); n != 2 {
		t.Errorf("a bad content said %d times, want once", n-1)
	}
	w.write("bot: {model: three}\n")
	w.wantApplied()
	w.write(bad)
	w.wantRefused(`unknown setting "colour"`)
	if got := w.model(); got != "three" {
		t.Errorf("model %q, want three (the last good)", got)
	}
}

// TestWatcherSettles: a file that keeps changing (a writer at it, each
// content good or not, the empty one among them) is not read as the file
// until it stays the same for Settle; then it is.
func TestWatcherSettles(t *testing.T) {
	w := watch(t, "bot: {model: one}\n", time.Second)
	for i := range 150 { // every 10 ms for 1.5 s: never the same for a second
		if i%2 == 0 {
			w.write("")
		} else {
			w.write(fmt.Sprintf("bot: {model: m%d, colour: red}\n", i))
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-w.applied:
		t.Errorf("a file being written was applied: model %q", w.model())
	case err := <-w.refused:
		t.Errorf("a file being written was refused: %v", err)
	default:
	}
	if got := w.model(); got != "one" {
		t.Errorf("model %q while the file was written, want one", got)
	}
	w.write("bot: {model: two}\n")
	w.wantApplied()
	if got := w.model(); got != "two" {
		t.Errorf("model %q once written, want two", got)
	}
}

// TestWatcherConfigMapSwap: a Kubernetes ConfigMap mounted as a directory
// updates its file by swapping a symlink (settings.yaml → ..data/ →
// ..<timestamp>/): the watch reads through the links and takes the new
// content; a bad one swapped in is refused.
func TestWatcherConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	version := func(name, content string) {
		t.Helper()
		if err := os.Mkdir(dir+"/"+name, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/"+name+"/settings.yaml", []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		// As the kubelet does: a new link beside, renamed over ..data.
		if err := os.Symlink(name, dir+"/..data_tmp"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir+"/..data_tmp", dir+"/..data"); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_11_29_a", "bot: {model: one}\n")
	if err := os.Symlink("..data/settings.yaml", dir+"/settings.yaml"); err != nil {
		t.Fatal(err)
	}
	w := watchAt(t, dir+"/settings.yaml", 20*time.Millisecond)
	version("..2026_11_29_b", "bot: {model: two}\n")
	w.wantApplied()
	if got := w.model(); got != "two" {
		t.Errorf("model %q after the swap, want two", got)
	}
	version("..2026_11_29_c", "bot: {model: three, colour: red}\n")
	w.wantRefused(`unknown setting "colour"`)
	if got := w.model(); got != "two" {
		t.Errorf("model %q after a bad swap, want two", got)
	}
}

// TestWatcherEmptiedKeepsRestrictions: a file emptied (truncated, or only
// its comments left) while the bot runs would take every restriction it
// gives away — a channel's users fall back to the bot's, wider. A look
// refuses it; SIGHUP (Reload) applies it, the operator's word.
func TestWatcherEmptiedKeepsRestrictions(t *testing.T) {
	w := watch(t, "channels:\n  console/console: {users: [UALICE], model: one}\n", 0)
	here := Where{Platform: "console", Channel: "console"}
	for _, emptied := range []string{"", "# nothing here yet\n"} {
		w.write(emptied)
		w.wantRefused("gives no settings now")
		if got := w.r.Get(here, Users).Text; got != "UALICE" {
			t.Fatalf("users after the file was emptied to %q: %q, want UALICE", emptied, got)
		}
	}
	w.reload <- struct{}{}
	w.wantApplied()
	if got := w.r.Get(here, Users); got.Set() {
		t.Errorf("users after SIGHUP applied the empty file: %+v", got)
	}
}

// TestWatcherPartsCheck: a file giving a value a part's check refuses is
// refused whole, with the value's line; the last good stays.
func TestWatcherPartsCheck(t *testing.T) {
	w := watch(t, "bot: {model: one}\n", 0)
	w.r.Check(MCP, func(v string) error {
		if v != "sentry" {
			return fmt.Errorf("mcp: no server %q in the servers file", v)
		}
		return nil
	})
	w.write("bot: {model: two}\nchannels:\n  console/console: {mcp: [nosuch]}\n")
	w.wantRefused("line 3: mcp: no server \"nosuch\"")
	if got := w.model(); got != "one" {
		t.Errorf("model %q after a refused file, want one", got)
	}
	w.write("bot: {model: two}\nchannels:\n  console/console: {mcp: [sentry]}\n")
	w.wantApplied()
	if got := w.model(); got != "two" {
		t.Errorf("model %q, want two", got)
	}
}
