package testkit

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Output records what a program or an adapter writes, as it comes, and
// lets a test wait for a line or a match. Safe for use by any goroutine;
// the zero value is not ready: use NewOutput.
type Output struct {
	mu     sync.Mutex
	b      bytes.Buffer
	lines  []string // the ended lines
	start  int      // where the line being written begins in b
	notify chan struct{}
}

// NewOutput is an empty Output.
func NewOutput() *Output { return &Output{notify: make(chan struct{}, 1)} }

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	o.b.Write(p)
	for {
		i := bytes.IndexByte(o.b.Bytes()[o.start:], '\n')
		if i < 0 {
			break
		}
		o.lines = append(o.lines, string(o.b.Bytes()[o.start:o.start+i]))
		o.start += i + 1
	}
	o.mu.Unlock()
	select {
	case o.notify <- struct{}{}:
	default:
	}
	return len(p), nil
}

// Bytes is all that was written.
func (o *Output) Bytes() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.b.Bytes())
}

// String is all that was written.
func (o *Output) String() string { return string(o.Bytes()) }

// Lines are the lines written so far, their newlines cut (a line not
// ended yet is not one).
func (o *Output) Lines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.lines...)
}

// Expect waits up to timeout for a line from *cursor on that matches
// pattern, moves *cursor past it and returns its submatches; it fails t
// with all the lines if none comes.
func (o *Output) Expect(t testing.TB, cursor *int, timeout time.Duration, pattern string) []string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var m []string
	o.await(t, timeout, func() bool {
		all := o.Lines()
		for i := *cursor; i < len(all); i++ {
			if m = re.FindStringSubmatch(all[i]); m != nil {
				*cursor = i + 1
				return true
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("no line matching %q; output:\n%s", pattern, strings.Join(o.Lines(), "\n"))
	})
	return m
}

// WaitMatch waits up to timeout until what was written matches pattern as
// a whole (a match may span lines, or be a line not ended yet).
func (o *Output) WaitMatch(t testing.TB, timeout time.Duration, pattern string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	o.await(t, timeout, func() bool { return re.Match(o.Bytes()) }, func() string {
		return fmt.Sprintf("no output matching %q; output:\n%s", pattern, o.Bytes())
	})
}

// await checks cond at each write until it holds or timeout passes.
func (o *Output) await(t testing.TB, timeout time.Duration, cond func() bool, fail func() string) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-o.notify:
		case <-deadline.C:
			t.Fatalf("after %s: %s", timeout, fail())
		}
	}
}
