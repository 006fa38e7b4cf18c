package main

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/health"
)

// httpReceiver is an adapter that also takes its platform's deliveries
// over HTTP (Slack's Events API): at /<name>/events, on a server it
// configures (its limits for slow or idle clients).
type httpReceiver interface {
	HTTPHandler() http.Handler
	ConfigureServer(srv *http.Server)
}

// newHTTP makes the server for the adapters' HTTP deliveries, the
// triggers' endpoints (triggersH: nil for none) and the operational
// endpoints (/healthz, /readyz, /metrics), listening on addr.
func newHTTP(addr string, ads []adapters.Adapter, h *health.Health, metricsH, triggersH http.Handler) (*http.Server, net.Listener, error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsH)
	if triggersH != nil {
		mux.Handle("POST /triggers/{name}", triggersH)
	}
	for _, ad := range ads {
		if r, ok := ad.(httpReceiver); ok {
			mux.Handle("POST /"+ad.Name()+"/events", r.HTTPHandler())
		}
	}
	h.Register(mux)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	for _, ad := range ads {
		if r, ok := ad.(httpReceiver); ok {
			r.ConfigureServer(srv)
		}
	}
	return srv, ln, nil
}

// serveHTTP serves until ctx ends, then lets requests in flight finish
// (for at most 5 s).
func (a *app) serveHTTP(ctx context.Context) error {
	a.log.Info("http listening", "addr", a.ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- a.srv.Serve(a.ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = a.srv.Shutdown(sctx)
	return nil
}
