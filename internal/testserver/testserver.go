// Package testserver (tests only) is what the harnesses that run a real
// server as a child process share (internal/dendrite, internal/giteatest):
// a free loopback port, waiting for the server to answer, stopping it, and
// the end of its log for a failure's message.
package testserver

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// FreeAddr picks a loopback port the kernel considers free. Another process
// could take it before the server binds; then the server exits and its
// start fails with its log, which is rare enough not to retry.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// WaitReady polls url until it answers 200, the server exits (exited
// closed), or timeout passes.
func WaitReady(url string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		select {
		case <-exited:
			return errors.New("exited before it answered")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer on %s after %v: %w", url, timeout, err)
		}
	}
}

// Stop ends the process the test started, by its PID: politely first
// (SIGTERM, so its databases are closed), then, after grace, for good.
// exited is closed once the process was waited for.
func Stop(t testing.TB, name string, p *os.Process, exited <-chan struct{}, grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(grace):
	}
	t.Logf("%s (pid %d) ignored SIGTERM for %v; killing it", name, p.Pid, grace)
	_ = p.Kill()
	<-exited
}

// Tail is the last lines of the file at path (its log), or why it could
// not be read.
func Tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
