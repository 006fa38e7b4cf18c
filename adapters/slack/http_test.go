package slack_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/internal/fakeslack"
)

// httpOnly is an adapter in HTTP mode with short limits, not running:
// every request below is refused before the bot would be needed.
func httpOnly(t *testing.T, limit time.Duration) *slack.Adapter {
	t.Helper()
	ad, err := slack.New(slack.Config{BotToken: "xoxb-test", SigningSecret: "secret",
		HTTPHeaderTimeout: limit, HTTPBodyTimeout: limit, HTTPMaxBody: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ad.Close)
	return ad
}

// serve runs h in srv on a local port until the test ends; its address.
func serve(t *testing.T, srv *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// slowClient sends head at once, then one byte of drip every 20 ms (or
// nothing, for an empty drip) for at most limit. It returns how long it
// took the server to close the connection (0 if it had not by then) and
// what the server wrote.
func slowClient(t *testing.T, addr, head, drip string, limit time.Duration) (time.Duration, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	type result struct {
		data  []byte
		after time.Duration
	}
	closed := make(chan result, 1)
	go func() {
		data, _ := io.ReadAll(conn) // until the server closes (or we do)
		closed <- result{data, time.Since(start)}
	}()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for i := 0; ; i++ {
		select {
		case r := <-closed:
			return r.after, string(r.data)
		case <-deadline:
			return 0, ""
		case <-tick.C:
			if drip != "" {
				// A write error means the server is gone; the reader sees it.
				_, _ = conn.Write([]byte{drip[i%len(drip)]})
			}
		}
	}
}

// TestHTTPSlowClientsCutOff: clients that send their headers or body a
// byte at a time, or send one request and then hold the connection idle,
// are disconnected by the server; the body's limit holds even where the
// handler runs in a server with no timeouts of its own. The control case
// shows that the client is slow enough to hold a server without them.
func TestHTTPSlowClientsCutOff(t *testing.T) {
	const limit = 200 * time.Millisecond
	const patience = 15 * time.Second // far beyond limit: only a server that never cuts off fails
	ad := httpOnly(t, limit)
	configured := &http.Server{Handler: ad.HTTPHandler()}
	ad.ConfigureServer(configured)
	withTimeouts := serve(t, configured)
	bare := serve(t, &http.Server{Handler: ad.HTTPHandler()})
	control := serve(t, &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
	})})

	slowHeaders := "POST /slack/events HTTP/1.1\r\nHost: bot\r\n"
	slowBody := "POST /slack/events HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n"
	idle := "POST /slack/events HTTP/1.1\r\nHost: bot\r\nContent-Length: 0\r\n\r\n"
	cases := []struct {
		name, addr, head, drip string
		wait                   time.Duration
		wantClosed             bool
	}{
		{"headers a byte at a time", withTimeouts, slowHeaders, "X-Slow: " + strings.Repeat("a", 5000), patience, true},
		{"body a byte at a time", withTimeouts, slowBody, strings.Repeat("{", 900), patience, true},
		{"body a byte at a time, handler in a server without timeouts", bare, slowBody, strings.Repeat("{", 900), patience, true},
		{"idle after a request", withTimeouts, idle, "", patience, true},
		{"control: headers a byte at a time, no timeouts anywhere", control, slowHeaders, "X-Slow: " + strings.Repeat("a", 5000), 1500 * time.Millisecond, false},
		{"control: body a byte at a time, no timeouts anywhere", control, slowBody, strings.Repeat("{", 900), 1500 * time.Millisecond, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			after, answer := slowClient(t, c.addr, c.head, c.drip, c.wait)
			t.Logf("closed after %v; server wrote %q", after, firstLine(answer))
			if closed := after > 0; closed != c.wantClosed {
				t.Errorf("closed by the server: %v, want %v", closed, c.wantClosed)
			}
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\r\n")
	return line
}

// TestHTTPBodyLimit: a body over HTTPMaxBody is refused before anything
// reads it as a request; one within it gets as far as the signature check.
func TestHTTPBodyLimit(t *testing.T) {
	srv := httptest.NewServer(httpOnly(t, 5*time.Second).HTTPHandler())
	defer srv.Close()
	for _, c := range []struct {
		size, want int
	}{{900, http.StatusUnauthorized}, {1000, http.StatusUnauthorized}, {1001, http.StatusRequestEntityTooLarge}, {5 << 20, http.StatusRequestEntityTooLarge}} {
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(bytes.Repeat([]byte("x"), c.size)))
		if err != nil {
			// The server may close before reading a huge body at all.
			if c.want == http.StatusRequestEntityTooLarge {
				continue
			}
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%d bytes: status %d, want %d", c.size, resp.StatusCode, c.want)
		}
	}
}

// TestHTTPReplayHandledOnce: a signed request delivered again byte for
// byte (same timestamp, same signature: a captured request replayed within
// the five minutes the signature stays fresh) is answered 200 and does
// nothing — a click decides nothing twice, a slash command does not run
// twice, an event is not delivered twice — while fresh deliveries still
// get through.
func TestHTTPReplayHandledOnce(t *testing.T) {
	var handler atomic.Pointer[http.Handler]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*handler.Load()).ServeHTTP(w, r) }))
	defer front.Close()
	s := newSoloWith(t, fakeslack.Options{EventsURL: front.URL, InteractivityURL: front.URL, CommandsURL: front.URL, NoBotEcho: true},
		func(c *slack.Config) { c.AppToken, c.SigningSecret = "", "fakesigningsecret" })
	h := s.ad.HTTPHandler()
	handler.Store(&h)
	th := s.thread()

	delivered := func(match func(adapters.Event) bool) int {
		s.mu.Lock()
		defer s.mu.Unlock()
		n := 0
		for _, ev := range s.events {
			if match(ev) {
				n++
			}
		}
		return n
	}
	waitCount := func(what string, match func(adapters.Event) bool, want int) {
		t.Helper()
		if !s.fs.WaitFor(wait, func() bool { return delivered(match) >= want }) {
			t.Fatalf("%s: %d delivered, want %d", what, delivered(match), want)
		}
	}
	roots := func() int {
		n := 0
		for _, m := range s.fs.Messages(general) {
			if m.BotID != "" && strings.Contains(m.Text, "asked: status") {
				n++
			}
		}
		return n
	}
	replay := func(kind string) {
		t.Helper()
		resp, err := s.fs.ReplayHTTP(kind)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("replayed %s answered %d, want 200 (so that Slack would not retry)", kind, resp.StatusCode)
		}
	}

	t.Run("click", func(t *testing.T) {
		ref, err := s.ad.Direct().Ask(t.Context(), th, adapters.Prompt{ID: "p-replay", Kind: adapters.PromptApproval, Title: "Run it?", Tool: "Bash",
			Choices: choices(adapters.ChoiceAllow, adapters.ChoiceDeny)})
		if err != nil {
			t.Fatal(err)
		}
		isClick := func(ev adapters.Event) bool { return ev.Click != nil && ev.Click.PromptID == "p-replay" }
		if err := s.fs.Click(alice, general, ref.ID, "claudeops_approval_allow"); err != nil {
			t.Fatal(err)
		}
		waitCount("the click", isClick, 1)
		replay("interactive") // handled synchronously: a delivery would be there now
		if n := delivered(isClick); n != 1 {
			t.Errorf("the replayed click was delivered: %d clicks", n)
		}
		// A fresh click (its own timestamp, action_ts and signature) is not a replay.
		if err := s.fs.Click(bob, general, ref.ID, "claudeops_approval_deny"); err != nil {
			t.Fatal(err)
		}
		waitCount("a second, fresh click", isClick, 2)
	})

	t.Run("event", func(t *testing.T) {
		ts := s.fs.Post(alice, general, mention+"replay me")
		isPost := func(ev adapters.Event) bool {
			return ev.Message != nil && strings.HasSuffix(ev.ID(), "/"+ts)
		}
		waitCount("message and app_mention", isPost, 2)
		replay("events_api")
		if n := delivered(isPost); n != 2 {
			t.Errorf("the replayed event was delivered: %d deliveries", n)
		}
	})

	t.Run("slash command", func(t *testing.T) {
		if err := s.fs.Slash(alice, general, "/claude", "status"); err != nil {
			t.Fatal(err)
		}
		if !s.fs.WaitFor(wait, func() bool { return roots() == 1 }) {
			t.Fatal("the slash command opened no thread")
		}
		replay("slash_commands")
		// The command runs in the background: give a replay that got
		// through ample time to post, then count.
		time.Sleep(500 * time.Millisecond)
		if n := roots(); n != 1 {
			t.Errorf("the replayed command ran again: %d threads", n)
		}
	})
	s.noViolations()
}
