package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// TestLineReader reads lines at and around the limit, and around the
// reader's own buffer (64 KiB), from a reader that hands over what it has
// and from one that hands over a byte at a time.
func TestLineReader(t *testing.T) {
	const max = 100 << 10 // over the buffer: a line may span several reads
	x := func(n int) string { return strings.Repeat("x", n) }
	type line struct {
		text    string
		size    int
		refused bool
	}
	ok := func(s string) line { return line{text: s, size: len(s)} }
	tests := []struct {
		name string
		in   string
		want []line
	}{
		{"short lines", "a\nb\n\nc", []line{ok("a"), ok("b"), ok(""), ok("c")}},
		{"CRLF", "a\r\nb\r\n", []line{ok("a"), ok("b")}},
		{"a CR alone is kept", "a\rb\n", []line{ok("a\rb")}},
		{"exactly the limit", x(max) + "\n" + "next\n", []line{ok(x(max)), ok("next")}},
		{"exactly the limit with CRLF", x(max) + "\r\n" + "next\n", []line{ok(x(max)), ok("next")}},
		{"one over the limit", x(max+1) + "\n" + "next\n", []line{{size: max + 1, refused: true}, ok("next")}},
		{"one over with CRLF", x(max+1) + "\r\n" + "next\n", []line{{size: max + 1, refused: true}, ok("next")}},
		{"far over, then more", x(5*max+7) + "\nnext\nand more", []line{{size: 5*max + 7, refused: true}, ok("next"), ok("and more")}},
		{"far over at EOF", "first\n" + x(3*max), []line{ok("first"), {size: 3 * max, refused: true}}},
		{"CRLF split at the buffer's end", x(64<<10-1) + "\r\n" + "next\n", []line{ok(x(64<<10 - 1)), ok("next")}},
		{"over, CRLF split at the buffer's end", x(2*64<<10-1) + "\r\n" + "next\n", []line{{size: 2*64<<10 - 1, refused: true}, ok("next")}},
		{"empty input", "", nil},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rname, mk := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				lr := newLineReader(mk(tt.in), max)
				var got []line
				for {
					l, err := lr.next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, line{text: l.text, size: l.size, refused: l.refused})
				}
				if len(got) != len(tt.want) {
					t.Fatalf("%d lines, want %d: %+v", len(got), len(tt.want), brief(got))
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("line %d: %+v, want %+v", i, brief(got[i:i+1]), brief(tt.want[i:i+1]))
					}
				}
			})
		}
	}
}

func brief[T any](v []T) string {
	s := fmt.Sprintf("%+v", v)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// TestLineReaderErrors: a read error is the reader's, not an EOF.
func TestLineReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	lr := newLineReader(io.MultiReader(strings.NewReader("ok\npartial"), iotest.ErrReader(boom)), 100)
	if l, err := lr.next(); err != nil || l.text != "ok" {
		t.Fatalf("first line %+v, %v", l, err)
	}
	if _, err := lr.next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the reader's error", err)
	}
}

// endless is an input of one line that never ends, made as it is read.
type endless struct{ left int }

func (e *endless) Read(p []byte) (int, error) {
	if e.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), e.left)
	for i := range n {
		p[i] = 'y'
	}
	e.left -= n
	return n, nil
}

// TestLineReaderMemoryBounded: a line of 64 MiB, with a limit of 1 MiB,
// costs about the limit in memory, not the line (oracle: the runtime's
// count of bytes allocated).
func TestLineReaderMemoryBounded(t *testing.T) {
	const line = 64 << 20
	lr := newLineReader(io.MultiReader(&endless{left: line}, strings.NewReader("\nafter\n")), DefaultMaxLine)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, err := lr.next()
	runtime.ReadMemStats(&after)
	if err != nil || !l.refused || l.size != line {
		t.Fatalf("got %+v, %v; want a refusal of %d bytes", l, err, line)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*DefaultMaxLine {
		t.Errorf("reading a %d-byte line allocated %d bytes", line, alloc)
	}
	if l, err := lr.next(); err != nil || l.text != "after" {
		t.Errorf("the line after: %+v, %v", l, err)
	}
}

// TestOverlongLineRefusedAndInputGoesOn: the operator pastes a line over
// the limit, then goes on typing. The long line is refused visibly (its
// size and the limit said), nothing of it is delivered, and every line
// after it is delivered as typed.
func TestOverlongLineRefusedAndInputGoesOn(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		size   int
		refuse string
	}{
		{"default limit", 0, 3 << 20, "[main] * line of 3145728 bytes refused: the limit is 1048576 bytes (CLAUDEOPS_CONSOLE_MAX_LINE); nothing of it was sent\n"},
		{"small limit", 10, 11, "[main] * line of 11 bytes refused: the limit is 10 bytes (CLAUDEOPS_CONSOLE_MAX_LINE); nothing of it was sent\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ty := startTypist(t, Options{MaxLine: tt.max})
			go func() {
				// Written while the console reads: the pipe holds nothing.
				_, _ = io.WriteString(ty.in, "before\n"+strings.Repeat("z", tt.size)+"\n")
				for i := range 5 {
					_, _ = io.WriteString(ty.in, fmt.Sprintf("after %d\n", i))
				}
				ty.in.Close()
			}()
			var got []string
			for range 6 {
				got = append(got, ty.next().Message.Text)
			}
			if want := "before,after 0,after 1,after 2,after 3,after 4"; strings.Join(got, ",") != want {
				t.Errorf("delivered %q, want %s", got, want)
			}
			select {
			case err := <-ty.done:
				if err != nil {
					t.Errorf("Run returned %v at EOF", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return at EOF")
			}
			select {
			case ev := <-ty.events:
				t.Errorf("also delivered %.80q", ev.Message.Text)
			default:
			}
			if out := ty.out.String(); out != tt.refuse {
				t.Errorf("output %q, want %q", out, tt.refuse)
			}
		})
	}
}

// A line of Claude's text being written when the operator ends a line is
// cut there, and shown whole when it goes on. Where the terminal echoes
// what is typed, their Enter has ended it on the screen already: nothing
// more is written.
func TestInputEndsAnOpenLine(t *testing.T) {
	tests := []struct {
		echoed bool
		want   string
	}{
		{false, "[main] claude: The answer is…\n[main] claude: The answer is 42.\n"},
		{true, "[main] claude: The answer is[main] claude: The answer is 42.\n"},
	}
	for _, tt := range tests {
		ty := startTypist(t, Options{})
		ty.a.echoed = tt.echoed
		ref, err := ty.a.Post(context.Background(), mainT, adapters.Message{Kind: adapters.KindText, Text: "The answer is"})
		if err != nil {
			t.Fatal(err)
		}
		ty.say("stop")
		ty.next()
		if err := ty.a.Edit(context.Background(), ref, adapters.Message{Kind: adapters.KindText, Text: "The answer is 42.", Final: true}); err != nil {
			t.Fatal(err)
		}
		if got := ty.out.String(); got != tt.want {
			t.Errorf("echoed %v: output %q, want %q", tt.echoed, got, tt.want)
		}
	}
}
