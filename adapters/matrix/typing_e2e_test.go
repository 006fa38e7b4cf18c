package matrix_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/claudeops/claudeops/adapters/matrix"
	"github.com/claudeops/claudeops/bot"
)

// typingGate is the bot's HTTP transport: it holds every typing request
// until opened, and records, in order, the typing state of those that
// reached the homeserver.
type typingGate struct {
	open chan struct{}

	mu   sync.Mutex
	held int    // typing requests that were held
	sent []bool // their typing state, as the server got them
}

func (g *typingGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPut || !strings.Contains(r.URL.Path, "/typing/") {
		return http.DefaultTransport.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.mu.Lock()
	g.held++
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusOK {
		var m struct{ Typing bool }
		_ = json.Unmarshal(body, &m)
		g.mu.Lock()
		g.sent = append(g.sent, m.Typing)
		g.mu.Unlock()
	}
	return resp, err
}

func (g *typingGate) state() (held int, sent []bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held, append([]bool(nil), g.sent...)
}

// Issue 12: nothing on Matrix's API sits between a message arriving and
// its prompt reaching Claude. The homeserver holds every typing notice;
// a turn still ends, and the next message of the thread still reaches the
// model. Once the notices pass, the last one the server gets is "not
// typing".
func TestTypingNoticesDoNotDelayPrompts(t *testing.T) {
	gate := &typingGate{open: make(chan struct{})}
	opened := false
	openGate := func() {
		if !opened {
			opened = true
			close(gate.open)
		}
	}
	defer openGate() // so that the adapter can close
	h := newHarness(t, options{mod: func(_ *bot.Config, mc *matrix.Config) {
		mc.HTTPClient = &http.Client{Transport: gate}
	}})
	room := h.room(false)
	root := h.mention(h.alice, room, "first words")
	h.waitBot(room, root, `ok: .*first words`)
	h.alice.SendText(room, "second words", "", root)
	reached := h.alice.WaitFor(wait, func() bool {
		for _, r := range h.api.Requests() {
			if strings.Contains(r.LastUserText(), "second words") {
				return true
			}
		}
		return false
	})
	held, sent := gate.state()
	if !reached {
		t.Fatalf("the second prompt did not reach the model while typing notices were held (held %d)", held)
	}
	if held == 0 || len(sent) != 0 {
		t.Fatalf("typing requests held %d, sent %v: the test did not hold them", held, sent)
	}
	h.waitBot(room, root, `ok: .*second words`)
	openGate()
	if !h.alice.WaitFor(wait, func() bool {
		_, sent := gate.state()
		return len(sent) > 0 && !sent[len(sent)-1]
	}) {
		_, sent := gate.state()
		t.Fatalf("typing notices the server got %v: the last must clear it", sent)
	}
	h.stop()
	if _, sent := gate.state(); sent[len(sent)-1] {
		t.Errorf("typing notices the server got %v: the last must clear it", sent)
	}
}
