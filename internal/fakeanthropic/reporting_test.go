package fakeanthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// Failure reporting and waiting for requests

// fakeTB captures Errorf/Fatalf and cleanups so failure reporting can be tested.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestUnexpectedRequestsReportedAtCleanup(t *testing.T) {
	ftb := &fakeTB{TB: t}
	s := Start(ftb, func(ctx context.Context, r *Request) Reply {
		if r.LastUserText() == "boom" {
			panic("script bug")
		}
		return Reply{Blocks: []Block{Text("ok")}}
	})
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/models: %d", resp.StatusCode)
	}
	// The old Text Completions endpoint is unexpected; count_tokens is
	// answered (the CLI's /context), counted and not a model request.
	resp = post(t, s, "/v1/complete", userBody(false, "x"))
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("POST /v1/complete: %d", resp.StatusCode)
	}
	resp = post(t, s, "/v1/messages/count_tokens?beta=true", userBody(false, "x"))
	var counted struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&counted); err != nil || resp.StatusCode != 200 || counted.InputTokens <= 0 || s.TokenCounts() != 1 {
		t.Errorf("count_tokens: status %d, %+v, %v; counted %d", resp.StatusCode, counted, err, s.TokenCounts())
	}
	resp.Body.Close()
	resp = post(t, s, "/v1/messages", `{"messages": 7}`)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("bad body: %d", resp.StatusCode)
	}
	resp = post(t, s, "/v1/messages", userBody(false, "boom"))
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("panicking script: %d", resp.StatusCode)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("recorded %d requests, want 1 (only the parsable /v1/messages one)", n)
	}
	ftb.mu.Lock()
	if len(ftb.errs) != 0 {
		t.Errorf("errors reported before cleanup: %q", ftb.errs)
	}
	ftb.mu.Unlock()

	ftb.runCleanups()
	all := strings.Join(ftb.errs, "\n")
	for _, want := range []string{"GET /v1/models", "POST /v1/complete", "not a Messages request", "Script panicked"} {
		if !strings.Contains(all, want) {
			t.Errorf("cleanup errors lack %q:\n%s", want, all)
		}
	}
	if _, err := http.Get(s.URL + "/v1/models"); err == nil {
		t.Errorf("server still serving after cleanup")
	}
}

func TestWaitRequests(t *testing.T) {
	s := Start(t, nil)
	if reqs, ok := s.TryWaitRequests(1, 50*time.Millisecond); ok || len(reqs) != 0 {
		t.Fatalf("TryWaitRequests on idle server: %d %v", len(reqs), ok)
	}
	go func() {
		for i := 0; i < 3; i++ {
			resp, err := http.Post(s.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(userBody(false, fmt.Sprint("m", i))))
			if err == nil {
				resp.Body.Close()
			}
		}
	}()
	reqs := s.WaitRequests(3, 5*time.Second)
	for i, r := range reqs {
		if r.LastUserText() != fmt.Sprint("m", i) || r.Seq != i+1 {
			t.Errorf("request %d: %q seq %d", i, r.LastUserText(), r.Seq)
		}
	}
}

// TestPreflightAnswered: the CLI's HEAD /api/hello warm-up gets 200 with no
// body, is counted apart from model requests and fails nothing; a HEAD of
// any other path, or another method on /api/hello, is still unexpected.
func TestPreflightAnswered(t *testing.T) {
	ftb := &fakeTB{TB: t}
	s := Start(ftb, nil)
	do := func(method, path string) *http.Response {
		req, err := http.NewRequest(method, s.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := do(http.MethodHead, "/api/hello")
	if resp.StatusCode != http.StatusOK || resp.ContentLength > 0 {
		t.Errorf("HEAD /api/hello: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	if n, reqs := s.Preflights(), s.Requests(); n != 1 || len(reqs) != 0 {
		t.Errorf("after the preflight: %d preflights, %d model requests; want 1, 0", n, len(reqs))
	}
	if resp := do(http.MethodHead, "/v1/messages"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HEAD /v1/messages: %d", resp.StatusCode)
	}
	if resp := do(http.MethodGet, "/api/hello"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /api/hello: %d", resp.StatusCode)
	}
	ftb.runCleanups()
	all := strings.Join(ftb.errs, "\n")
	if strings.Contains(all, "HEAD /api/hello") || !strings.Contains(all, "HEAD /v1/messages") || !strings.Contains(all, "GET /api/hello") {
		t.Errorf("cleanup errors:\n%s", all)
	}
}
