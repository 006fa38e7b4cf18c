package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// healthServer serves h on 127.0.0.1 until the test ends; it returns the
// port.
func healthServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestHealthcheck: `claudeops healthcheck` is healthy (0) only when
// GET /healthz answers 200, asked on loopback when the bot listens on all
// addresses; anything else, a hung server included, is 1.
func TestHealthcheck(t *testing.T) {
	ok := healthServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	down := healthServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	})
	moved := healthServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+ok+"/healthz", http.StatusFound)
	})
	release := make(chan struct{})
	hung := healthServer(t, func(w http.ResponseWriter, r *http.Request) {
		select { // answers only after the test
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // before the servers close (cleanups run last first)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	tests := []struct {
		name, addr string
		code       int
		out        string // in stdout when 0, in stderr otherwise
	}{
		{"200", "127.0.0.1:" + ok, 0, "GET http://127.0.0.1:" + ok + "/healthz: 200 OK"},
		{"empty host", ":" + ok, 0, "http://127.0.0.1:" + ok + "/healthz"},
		{"IPv4 unspecified", "0.0.0.0:" + ok, 0, "http://127.0.0.1:" + ok + "/healthz"},
		{"IPv6 unspecified", "[::]:" + ok, 0, "http://127.0.0.1:" + ok + "/healthz"},
		{"name", "localhost:" + ok, 0, "http://localhost:" + ok + "/healthz"},
		{"503", "127.0.0.1:" + down, 1, "503 Service Unavailable"},
		{"redirect not followed", "127.0.0.1:" + moved, 1, "302 Found"},
		{"nothing listening", closed, 1, "connection refused"},
		{"no answer", "127.0.0.1:" + hung, 1, "deadline exceeded"},
		{"unset", "", 1, "CLAUDEOPS_HTTP_ADDR is not set"},
		{"no port", "127.0.0.1", 1, `CLAUDEOPS_HTTP_ADDR "127.0.0.1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			env := []string{"PATH=/usr/bin"}
			if tt.addr != "" {
				env = append(env, "CLAUDEOPS_HTTP_ADDR="+tt.addr)
			}
			code := healthcheck(context.Background(), env, time.Second, &stdout, &stderr)
			out := stdout.String()
			if tt.code != 0 {
				out = stderr.String()
			}
			if code != tt.code || !strings.Contains(out, tt.out) {
				t.Errorf("exit %d (want %d), output lacks %q:\nstdout: %s\nstderr: %s", code, tt.code, tt.out, &stdout, &stderr)
			}
		})
	}
}

// TestHealthcheckCommand: the subcommand reads CLAUDEOPS_HTTP_ADDR alone,
// so a setting the bot would refuse does not make the check fail (the bot
// reports that itself), and it answers the bot's state, not the checker's.
func TestHealthcheckCommand(t *testing.T) {
	port := healthServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
		}
	})
	env := []string{"CLAUDEOPS_HTTP_ADDR=:" + port, "CLAUDEOPS_MAX_SESSIONS=none", "CLAUDEOPS_WORKDIR=/nonexistent"}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"healthcheck"}, env, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Errorf("healthcheck: exit %d, want 0; stderr: %s", code, &stderr)
	}
	env[0] = "CLAUDEOPS_HTTP_ADDR=127.0.0.1:1"
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"healthcheck"}, env, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Errorf("healthcheck of a port where nothing listens: exit %d, want 1; stderr: %s", code, &stderr)
	}
}
