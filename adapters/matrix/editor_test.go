package matrix

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/store"
)

// fakeSend is a homeserver that takes /send and can answer 429 first.
type fakeSend struct {
	mu      sync.Mutex
	bodies  []map[string]any
	typing  []bool
	limited int // answer this many requests with 429 first
}

func (f *fakeSend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/typing/") {
		var m struct{ Typing bool }
		_ = json.NewDecoder(r.Body).Decode(&m)
		f.mu.Lock()
		f.typing = append(f.typing, m.Typing)
		f.mu.Unlock()
		io.WriteString(w, `{}`)
		return
	}
	if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/send/") {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limited > 0 {
		f.limited--
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"errcode":"M_LIMIT_EXCEEDED","error":"slow down","retry_after_ms":10}`)
		return
	}
	var m map[string]any
	_ = json.NewDecoder(r.Body).Decode(&m)
	f.bodies = append(f.bodies, m)
	io.WriteString(w, `{"event_id":"$sent`+strings.Repeat("x", len(f.bodies))+`"}`)
}

func (f *fakeSend) sent() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

func connectedAdapter(t *testing.T, hs http.Handler, interval time.Duration) *Adapter {
	t.Helper()
	srv := httptest.NewServer(hs)
	t.Cleanup(srv.Close)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := New(Config{Homeserver: srv.URL, UserID: me, AccessToken: "tok", State: StoreState{st}, EditInterval: interval})
	if err != nil {
		t.Fatal(err)
	}
	a.cli.AccessToken = "tok"
	close(a.ready) // as if Connect had run
	return a
}

func newBody(m map[string]any) string {
	nc, _ := m["m.new_content"].(map[string]any)
	s, _ := nc["body"].(string)
	return s
}

func TestEditorCoalescesAndAlwaysSendsTheLast(t *testing.T) {
	hs := &fakeSend{}
	a := connectedAdapter(t, hs, 200*time.Millisecond)
	const room, ev = id.RoomID("!r:example.org"), id.EventID("$live")
	for i := 1; i <= 50; i++ {
		a.setEdit(room, "", ev, content(strings.Repeat("word ", i)), false)
		time.Sleep(5 * time.Millisecond)
	}
	a.Close() // sends what is pending
	got := hs.sent()
	if len(got) == 0 || len(got) > 4 {
		t.Fatalf("%d edits for 50 updates in ~250 ms at one per 200 ms", len(got))
	}
	if last := newBody(got[len(got)-1]); last != strings.TrimSpace(strings.Repeat("word ", 50)) && last != strings.Repeat("word ", 50) {
		t.Errorf("last edit %q is not the last content", last)
	}
	count := a.ed.Sent()
	if count != len(got) {
		t.Errorf("edits counted %d, sent %d", count, len(got))
	}
}

func TestEditorWaitsOutRateLimits(t *testing.T) {
	hs := &fakeSend{limited: 2}
	a := connectedAdapter(t, hs, 10*time.Millisecond)
	const room, ev = id.RoomID("!r:example.org"), id.EventID("$live")
	a.setEdit(room, "", ev, content("final words"), false)
	deadline := time.Now().Add(30 * time.Second)
	for len(hs.sent()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	a.Close()
	got := hs.sent()
	if len(got) != 1 || newBody(got[0]) != "final words" {
		t.Fatalf("after two 429s: %v", got)
	}
}

func TestTypingLastsWhileAnyThreadOfTheRoomIsBusy(t *testing.T) {
	hs := &fakeSend{}
	a := connectedAdapter(t, hs, time.Second)
	t1 := adapters.ThreadRef{Platform: Platform, Channel: "!r:example.org", Thread: "$a"}
	t2 := t1
	t2.Thread = "$b"
	typing := func() []bool {
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return append([]bool(nil), hs.typing...)
	}
	waitTyping := func(n int) []bool {
		deadline := time.Now().Add(10 * time.Second)
		for len(typing()) < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		return typing()
	}
	_ = a.SetStatus(t.Context(), t1, "is thinking…")
	_ = a.SetStatus(t.Context(), t2, "is thinking…")
	waitTyping(1)
	_ = a.SetStatus(t.Context(), t1, "")
	// t2 still busy: the room's typer has nothing to send. Setting t1 again
	// and clearing t2 makes it send nothing either; only the last clear does.
	_ = a.SetStatus(t.Context(), t1, "is thinking…")
	_ = a.SetStatus(t.Context(), t2, "")
	_ = a.SetStatus(t.Context(), t1, "")
	if got := waitTyping(2); len(got) != 2 || !got[0] || got[1] {
		t.Fatalf("typing notices %v, want 'typing' while a thread is busy, then one clear", got)
	}
	a.Close() // the typer has ended
	if got := typing(); len(got) != 2 {
		t.Errorf("typing notices %v after Close, want no more", got)
	}
}

// TestSetStatusDoesNotWaitForTheServer: the bot calls SetStatus between a
// message arriving and the prompt reaching Claude. With the homeserver
// holding every typing request, SetStatus still returns; once it answers,
// the last state set is the last one it got.
func TestSetStatusDoesNotWaitForTheServer(t *testing.T) {
	release := make(chan struct{})
	hs := &fakeSend{}
	var held sync.WaitGroup
	held.Add(1)
	var once sync.Once
	gate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/typing/") {
			once.Do(held.Done)
			<-release
		}
		hs.ServeHTTP(w, r)
	})
	a := connectedAdapter(t, gate, time.Second)
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open) // before the server closes, should the test fail
	th := adapters.ThreadRef{Platform: Platform, Channel: "!r:example.org", Thread: "$a"}
	_ = a.SetStatus(t.Context(), th, "is thinking…")
	held.Wait() // the first notice is at the server, held
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			_ = a.SetStatus(t.Context(), th, "")
			_ = a.SetStatus(t.Context(), th, "is thinking…")
		}
		_ = a.SetStatus(t.Context(), th, "")
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("SetStatus waited for the homeserver")
	}
	open()
	a.Close()
	hs.mu.Lock()
	got := append([]bool(nil), hs.typing...)
	hs.mu.Unlock()
	if len(got) < 2 || !got[0] || got[len(got)-1] {
		t.Fatalf("typing notices %v: want 'typing' first and a clear last", got)
	}
}

// TestStatusMessagesStayWithinAnEvent: tool lines with long code blocks
// start new status messages before one outgrows an event; each keeps
// every line of its tools.
func TestStatusMessagesStayWithinAnEvent(t *testing.T) {
	hs := &fakeSend{}
	a := connectedAdapter(t, hs, 10*time.Millisecond)
	th := adapters.ThreadRef{Platform: Platform, Channel: "!r:example.org", Thread: "$root"}
	input := strings.Repeat("echo <a lot> & more\n", toolInputBytes/21)
	for i := range 12 {
		tool := &adapters.Tool{Name: "Bash", Input: fmt.Sprintf("%s# tool %d", input, i), State: adapters.ToolOK}
		if longInput(tool) {
			t.Fatal("a long input: this test is about inputs shown whole")
		}
		if _, err := a.Post(t.Context(), th, adapters.Message{Kind: adapters.KindTool, Tool: tool}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	// What each status message shows last: its edits' content, or what
	// was posted for one never edited.
	posts, last, all := 0, map[string]string{}, ""
	for _, m := range hs.sent() {
		raw, _ := json.Marshal(m)
		if len(raw) > maxContentBytes {
			t.Errorf("an event of %d bytes", len(raw))
		}
		if rel, _ := m["m.relates_to"].(map[string]any); rel["rel_type"] == "m.replace" {
			last[rel["event_id"].(string)] = newBody(m)
		} else {
			posts++
			all += m["body"].(string)
		}
	}
	if posts < 2 {
		t.Errorf("12 tools of %d bytes each in %d status message(s)", len(input), posts)
	}
	for _, body := range last {
		all += body
	}
	for i := range 12 {
		if !strings.Contains(all, fmt.Sprintf("# tool %d\n```", i)) {
			t.Errorf("tool %d's input is missing", i)
		}
	}
}
