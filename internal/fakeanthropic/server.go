package fakeanthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Script decides the reply to each request. The server serialises calls (a
// Script needs no locking of its own), so a Script must not block for long:
// to keep a reply open, return a Reply with Hold instead. ctx ends when the
// client disconnects or the server stops.
//
// An empty Reply answers a probe (Request.IsProbe) with DefaultText; to any
// other request it is sent as a message without content, which the CLI
// answers by re-asking once with "[Your previous response had no visible
// output. ...]" appended to the user message.
//
// A Script runs on a server goroutine: it must not call t.FailNow/t.Fatal;
// use Server.Errorf (or t.Errorf) to report problems.
type Script func(ctx context.Context, req *Request) Reply

// Server is a running fake Messages API.
type Server struct {
	// URL is the base URL, "http://127.0.0.1:<port>"; use it as ANTHROPIC_BASE_URL.
	URL string

	t      testing.TB
	script Script
	srv    *http.Server
	ctx    context.Context
	cancel context.CancelFunc

	scriptMu sync.Mutex // serialises script calls

	mu         sync.Mutex
	closed     bool
	handlers   sync.WaitGroup
	requests   []*Request
	preflights int           // HEAD /api/hello answered
	counts     int           // POST /v1/messages/count_tokens answered
	changed    chan struct{} // closed and replaced when requests grows
	errs       []string      // unexpected paths, bad bodies, script panics
}

// DefaultText is the text answered when the Script is nil (and to a probe
// when the Script returns an empty Reply).
const DefaultText = "Hello from fakeanthropic."

// Start serves on 127.0.0.1:0 until t's cleanup. A nil script answers every
// request with DefaultText.
func Start(t testing.TB, script Script) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeanthropic: listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		t:       t,
		script:  script,
		ctx:     ctx,
		cancel:  cancel,
		changed: make(chan struct{}),
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(s.close)
	return s
}

func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel() // releases Holds and ends script contexts
	_ = s.srv.Close()

	done := make(chan struct{})
	go func() { s.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.t.Errorf("fakeanthropic: a request handler (Script) was still running 10s after the test ended")
	}

	s.mu.Lock()
	errs := append([]string(nil), s.errs...)
	s.mu.Unlock()
	for _, e := range errs {
		s.t.Errorf("fakeanthropic: %s", e)
	}
}

// Errorf records a failure that is reported (with t.Errorf) at cleanup. It is
// safe to call from a Script.
func (s *Server) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

// Requests returns every /v1/messages request received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// TryWaitRequests waits until at least n requests arrived or timeout passed,
// and returns the requests so far and whether there are at least n. It may be
// called from any goroutine.
func (s *Server) TryWaitRequests(n int, timeout time.Duration) ([]*Request, bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		reqs := append([]*Request(nil), s.requests...)
		changed := s.changed
		s.mu.Unlock()
		if len(reqs) >= n {
			return reqs, true
		}
		select {
		case <-changed:
		case <-timer.C:
			return reqs, false
		}
	}
}

// WaitRequests waits until at least n requests arrived and returns all
// requests so far. On timeout it fails the test with t.Fatalf, so call it
// from the test goroutine (or use TryWaitRequests).
func (s *Server) WaitRequests(n int, timeout time.Duration) []*Request {
	s.t.Helper()
	reqs, ok := s.TryWaitRequests(n, timeout)
	if !ok {
		s.t.Fatalf("fakeanthropic: waited %v for %d requests, got %d", timeout, n, len(reqs))
	}
	return reqs
}

// Preflights is how many HEAD /api/hello warm-ups the server answered.
func (s *Server) Preflights() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.preflights
}

// TokenCounts is how many POST /v1/messages/count_tokens the server
// answered (the CLI counts what its /context command shows, for a
// session's instruction files and MCP tools).
func (s *Server) TokenCounts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// countTokens answers count_tokens as the API does, with an estimate (a
// token per four bytes of the body): the figure is only shown.
func (s *Server) countTokens(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		s.Errorf("reading request body of %s: %v", hr.URL.RequestURI(), err)
		return
	}
	s.mu.Lock()
	s.counts++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4+1)
}

func (s *Server) record(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.requests) + 1
	s.requests = append(s.requests, r)
	close(s.changed)
	s.changed = make(chan struct{})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "fakeanthropic: server closed", http.StatusServiceUnavailable)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	n := responseSeq.Add(1)
	w.Header().Set("request-id", "req_fake_"+strconv.FormatInt(n, 10))

	if hr.Method == http.MethodHead && hr.URL.Path == "/api/hello" {
		// The CLI ignores the answer (it only opens the connection early);
		// a 404 would be a test failure, so answer it as the API does.
		s.mu.Lock()
		s.preflights++
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return
	}
	if hr.Method == http.MethodPost && hr.URL.Path == "/v1/messages/count_tokens" {
		s.countTokens(w, hr)
		return
	}
	if hr.Method != http.MethodPost || hr.URL.Path != "/v1/messages" {
		s.Errorf("unexpected request %s %s", hr.Method, hr.URL.RequestURI())
		writeError(w, http.StatusNotFound, "not_found_error", "fakeanthropic: only POST /v1/messages is served")
		return
	}
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		s.Errorf("reading request body of %s: %v", hr.URL.RequestURI(), err)
		return
	}
	req, err := ParseRequest(body, hr.Header)
	if err != nil {
		s.Errorf("%v; body: %.500s", err, body)
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	req.Path = hr.URL.RequestURI()
	s.record(req)

	ctx, cancel := context.WithCancel(hr.Context())
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	rep, ok := s.runScript(ctx, req)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "fakeanthropic: the test script panicked")
		return
	}
	if rep.isEmpty() && (s.script == nil || req.IsProbe()) {
		rep.Blocks = []Block{Text(DefaultText)}
	}
	for k, vs := range rep.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}

	if rep.isError() {
		if !s.hold(ctx, rep.Hold) {
			return
		}
		typ, msg := rep.ErrorType, rep.ErrorMessage
		if typ == "" {
			typ = defaultErrorType(rep.Status)
		}
		if msg == "" {
			msg = "fakeanthropic: scripted " + typ
		}
		writeError(w, rep.Status, typ, msg)
		return
	}

	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	msgID := "msg_fake_" + strconv.FormatInt(n, 10)
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if !req.Stream {
		if !s.hold(ctx, rep.Hold) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(messageJSON(&rep, msgID, model))
		return
	}
	s.stream(ctx, w, status, &rep, msgID, model)
}

// runScript calls the script under scriptMu; ok is false if it panicked.
func (s *Server) runScript(ctx context.Context, req *Request) (rep Reply, ok bool) {
	if s.script == nil {
		return Reply{}, true
	}
	s.scriptMu.Lock()
	defer s.scriptMu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			s.Errorf("Script panicked on request %d (%q): %v", req.Seq, req.LastUserText(), p)
			ok = false
		}
	}()
	return s.script(ctx, req), true
}

// hold waits for ch (if non-nil) to be closed; false if ctx ended first.
func (s *Server) hold(ctx context.Context, ch <-chan struct{}) bool {
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, status int, rep *Reply, msgID, model string) {
	evs := streamEvents(rep, msgID, model)
	// The pause point (Hold, StreamError, Drop) is right after the first
	// delta, or after message_start when there is none.
	pause := 0
	for i, ev := range evs {
		if ev.delta {
			pause = i
			break
		}
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	for i, ev := range evs {
		if ev.delta && rep.ChunkDelay > 0 && i > pause {
			select {
			case <-time.After(rep.ChunkDelay):
			case <-ctx.Done():
				return
			}
		}
		if err := writeEvent(w, ev.name, ev.data); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		if i != pause {
			continue
		}
		if !s.hold(ctx, rep.Hold) {
			return
		}
		if rep.StreamError != "" {
			_ = writeEvent(w, "error", json.RawMessage(errorBody(rep.StreamError, "fakeanthropic: scripted stream "+rep.StreamError)))
			_ = rc.Flush()
			return
		}
		if rep.Drop {
			// Abort the connection: no terminating chunk, no message_stop.
			panic(http.ErrAbortHandler)
		}
	}
}

// writeEvent writes one SSE event: "event:" line, "data:" line, blank line.
func writeEvent(w io.Writer, name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("event: ")
	sb.WriteString(name)
	sb.WriteString("\ndata: ")
	sb.Write(b)
	sb.WriteString("\n\n")
	_, err = io.WriteString(w, sb.String())
	return err
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(typ, msg))
}
