package triggers

import (
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// benchHandler is the handler of testFile over a real store, called
// directly (no network): what the bot spends on one request.
func benchHandler(b *testing.B) http.Handler {
	h, _, _ := newHandler(b, slog.New(slog.DiscardHandler))
	mux := http.NewServeMux()
	mux.Handle("POST /triggers/{name}", h)
	return mux
}

// BenchmarkRefused: a request with a bad signature (401), the flood a
// stranger can send: read, HMAC, counted in the store.
func BenchmarkRefused(b *testing.B) {
	h := benchHandler(b)
	body := giteaIssue("t")
	for b.Loop() {
		r := httptest.NewRequest("POST", "/triggers/gitea-issue", strings.NewReader(body))
		r.Header.Set("X-Gitea-Signature", strings.Repeat("0", 64))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 401 {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchmarkIgnored: a signed delivery no filter takes (200 ignored), what
// a busy repository sends most: HMAC, the delivery stored, the JSON read,
// counted.
func BenchmarkIgnored(b *testing.B) {
	h := benchHandler(b)
	body := strings.Replace(giteaIssue("t"), "claude", "docs", 1)
	sig := hex.EncodeToString(Sign([]byte(testSecret), []byte(body)))
	i := 0
	for b.Loop() {
		i++
		r := httptest.NewRequest("POST", "/triggers/gitea-issue", strings.NewReader(body))
		r.Header.Set("X-Gitea-Event", "issues")
		r.Header.Set("X-Gitea-Signature", sig)
		r.Header.Set("X-Gitea-Delivery", "d-"+strconv.Itoa(i))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("status %d", w.Code)
		}
	}
}
