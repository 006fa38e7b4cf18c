package testmcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/claudeops/claudeops/internal/testmcp/proto"
)

// HTTPServer is the same server over MCP's streamable http transport
// (each POST one JSON-RPC message, answered as JSON), on loopback. It
// records the Authorization header of every request.
type HTTPServer struct {
	URL string

	mu    sync.Mutex
	auths []string
}

// HTTP starts the server; its marks go in marks (as the stdio one's).
func HTTP(t testing.TB, marks string) *HTTPServer {
	s := &HTTPServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		var req proto.Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(proto.Answer(marks, req))
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/mcp"
	return s
}

// Auths are the Authorization headers the server was sent, in order.
func (s *HTTPServer) Auths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auths...)
}
