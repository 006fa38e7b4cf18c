package fakegithub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// apiPath is where the fake serves the API: GitHub Enterprise Server's
// base path, so that a client that drops its base URL's path fails.
const apiPath = "/api/v3"

// Server is a fake GitHub: the REST operations a forge client calls,
// answered from its state, every request and reply checked against the
// description.
type Server struct {
	URL   string // the API's base URL, e.g. http://127.0.0.1:4321/api/v3
	Web   string // the pages' root (html_url), e.g. http://127.0.0.1:4321
	Token string // the one token it accepts, as "Bearer" or "token"
	Login string // the token's user: the author of what it opens

	started time.Time
	d       *Description
	t       testing.TB

	mu       sync.Mutex
	repos    map[string]*repo // by "owner/name", lower case
	users    map[string]int64
	nextID   int64
	requests []Request
	problems []string
	before   func(op string) // BeforeOperation's hook
}

// Request is one request the fake received.
type Request struct {
	Method, Path, Query string // Path below URL
	Op                  string // the description's operationId ("" for none)
	Body                string
	Authorization       string // the header as sent
	Status              int
}

// Start starts a fake GitHub for the test, with one token of its user
// "claudeops-bot". At cleanup the test fails for each problem the checks
// found that it did not take (TakeProblems).
func Start(t testing.TB) *Server {
	t.Helper()
	d := Describe(t)
	s := &Server{Token: "ghp_fake" + fmt.Sprint(time.Now().UnixNano()), Login: "claudeops-bot", d: d, t: t,
		repos: map[string]*repo{}, users: map[string]int64{}, nextID: 1000, started: time.Now()}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	s.Web, s.URL = srv.URL, srv.URL+apiPath
	t.Cleanup(func() {
		srv.Close()
		for _, p := range s.TakeProblems() {
			t.Errorf("fake GitHub: %s", p)
		}
	})
	return s
}

// Requests is what the fake received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// TakeProblems returns what the checks found wrong so far and forgets it.
func (s *Server) TakeProblems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.problems
	s.problems = nil
	return p
}

// BeforeOperation runs f (with the operation's id) before each
// authenticated request is handled: a test's way to act between a
// client's requests (e.g. someone opening a pull request).
func (s *Server) BeforeOperation(f func(op string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.before = f
}

func (s *Server) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	path, ok := strings.CutPrefix(r.URL.Path, apiPath)
	req := Request{Method: r.Method, Path: path, Query: r.URL.RawQuery, Body: string(body), Authorization: r.Header.Get("Authorization")}
	// Recorded as it arrives, its operation and status as soon as known:
	// the client has the answer (and may ask Requests) before this
	// handler returns.
	s.mu.Lock()
	s.requests = append(s.requests, req)
	i := len(s.requests) - 1
	s.mu.Unlock()
	rec := &recorder{ResponseWriter: w, status: func(code int) {
		s.mu.Lock()
		s.requests[i].Status = code
		s.mu.Unlock()
	}}
	if !ok {
		s.problem("%s %s: not below the API's base path %s", r.Method, r.URL.Path, apiPath)
		writeJSON(rec, http.StatusNotFound, basicError(http.StatusNotFound, "Not Found"))
		return
	}
	op, found := s.d.Find(r.Method, path)
	if !found {
		s.problem("%s %s: no such operation in GitHub's REST description", r.Method, path)
		writeJSON(rec, http.StatusNotFound, basicError(http.StatusNotFound, "Not Found"))
		return
	}
	s.mu.Lock()
	s.requests[i].Op = op.ID
	s.mu.Unlock()
	if !s.authorized(rec, req.Authorization) {
		return
	}
	if len(body) > 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.problem("%s: a body of Content-Type %q", op.ID, r.Header.Get("Content-Type"))
	}
	if probs := s.d.CheckRequest(op, r.URL.Query(), body); len(probs) > 0 {
		for _, p := range probs {
			s.problem("%s: %s", op.ID, p)
		}
		// GitHub answers a body its schema refuses with 422.
		s.reply(rec, op, http.StatusUnprocessableEntity, obj{"message": "Invalid request.\n\n" + strings.Join(probs, "\n"), "documentation_url": docs, "status": "422"})
		return
	}
	s.mu.Lock()
	before := s.before
	s.mu.Unlock()
	if before != nil {
		before(op.ID)
	}
	h, served := handlers[op.ID]
	if !served {
		s.problem("%s %s: %s is in the description but the fake does not serve it", r.Method, path, op.ID)
		writeJSON(rec, http.StatusNotFound, basicError(http.StatusNotFound, "Not Found"))
		return
	}
	status, out := h(s, rec, &call{op: op, vars: vars(op, path), query: r.URL.Query(), body: body})
	s.reply(rec, op, status, out)
}

// authorized answers 401 as GitHub does to a request without the token.
func (s *Server) authorized(w http.ResponseWriter, header string) bool {
	scheme, tok, _ := strings.Cut(header, " ")
	switch {
	case header == "":
		writeJSON(w, http.StatusUnauthorized, basicError(http.StatusUnauthorized, "Requires authentication"))
		return false
	case (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "token")) && tok == s.Token:
		return true
	}
	writeJSON(w, http.StatusUnauthorized, basicError(http.StatusUnauthorized, "Bad credentials"))
	return false
}

// reply writes v as op's answer with status, checked against the
// description first: the fake cannot drift from GitHub's shapes.
func (s *Server) reply(w http.ResponseWriter, op *Operation, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.problem("%s: encoding the reply: %v", op.ID, err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	for _, p := range s.d.CheckResponse(op, status, b) {
		s.problem("%s: the fake's own reply: %s", op.ID, p)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// vars are the path's values of op's template's {names}.
func vars(op *Operation, path string) map[string]string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	out := map[string]string{}
	for i, t := range op.segs {
		if name, ok := strings.CutPrefix(t, "{"); ok {
			out[strings.TrimSuffix(name, "}")] = segs[i]
		}
	}
	return out
}

// recorder tells status the answer's code before it is sent.
type recorder struct {
	http.ResponseWriter
	status func(int)
}

func (r *recorder) WriteHeader(code int) {
	r.status(code)
	r.ResponseWriter.WriteHeader(code)
}

// decode reads a JSON request body into v (already checked against the
// schema, so only GitHub's own rules remain).
func decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return json.Unmarshal(body, v)
}
