package mcptools

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Files that change under send_file: grown, swapped between the checks
// and the open, swapped while calls run. The oracle is still the real
// filesystem and what Post received.

// TestSendFileGrowingWhileRead: a file that grows past the limit after
// its size was checked is refused, not cut to the limit. readCapped is
// where that is decided; then the whole path runs against a file that a
// writer keeps growing, in 7-byte appends from 50 bytes, so that any
// length a read can see is 50+7k, and a cut at the limit (1000) is not.
func TestSendFileGrowingWhileRead(t *testing.T) {
	for _, tt := range []struct {
		n  int
		ok bool
	}{{99, true}, {100, true}, {101, false}, {5000, false}} {
		data, err := readCapped(strings.NewReader(strings.Repeat("z", tt.n)), 100)
		if tt.ok != (err == nil) || tt.ok && len(data) != tt.n {
			t.Errorf("readCapped of %d bytes, max 100: %d bytes, %v", tt.n, len(data), err)
		}
	}

	ws := t.TempDir()
	p := filepath.Join(ws, "log")
	grow := func() error {
		// A new file each round (renamed into place): a read that holds
		// the old one sees only appends to it.
		tmp := filepath.Join(ws, ".log")
		if err := os.WriteFile(tmp, bytes.Repeat([]byte("a"), 50), 0o644); err != nil {
			return err
		}
		f, err := os.OpenFile(tmp, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
		for size := 50; size < 1100; size += 7 {
			if _, err := f.Write([]byte("bbbbbbb")); err != nil {
				return err
			}
		}
		return nil
	}
	if err := grow(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := grow(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	const max = 1000
	for range 300 {
		data, err := readFile(ws, "log", max, nil)
		if err != nil {
			continue // refused: too large, or changed while opened
		}
		if len(data) > max || (len(data)-50)%7 != 0 {
			t.Fatalf("read %d bytes of a file that only ever had 50+7k: cut, not refused", len(data))
		}
	}
}

// TestSendFileSwappedAfterTheCheck: a file replaced between the checks
// and the open, by a link out, a FIFO, a directory or another (larger)
// file, is not posted: the open goes through the root again, and what was
// opened must be the file that was checked.
func TestSendFileSwappedAfterTheCheck(t *testing.T) {
	tr := newTree(t)
	ws := tr.ws
	target := filepath.Join(ws, "flip")
	swaps := map[string]func() error{
		"symlink out": func() error { return os.Symlink(tr.outside, target) },
		"symlink to the state": func() error {
			return os.Symlink(filepath.Join(tr.state, "claudeops.db"), target)
		},
		"fifo":      func() error { return syscall.Mkfifo(target, 0o644) },
		"directory": func() error { return os.Mkdir(target, 0o755) },
		"larger file": func() error {
			return os.WriteFile(target, bytes.Repeat([]byte("L"), 2<<20), 0o644)
		},
	}
	for name, swap := range swaps {
		t.Run(name, func(t *testing.T) {
			write(t, target, "the workspace's own file\n")
			beforeOpen = func() {
				if err := os.Remove(target); err != nil {
					t.Error(err)
				}
				if err := swap(); err != nil {
					t.Error(err)
				}
			}
			defer func() { beforeOpen = nil; os.RemoveAll(target) }()
			s, p := newServer(ws, 1<<20)
			done := make(chan struct{})
			var text string
			var isErr bool
			go func() {
				defer close(done)
				text, isErr = callTool(t, s, sendFileName, map[string]any{"path": "flip"})
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("send_file blocked on what was swapped in")
			}
			if !isErr || len(p.got()) != 0 {
				t.Errorf("swapped for a %s: %q (isError %v), posted %d", name, text, isErr, len(p.got()))
			}
		})
	}
}

// TestSendFileSwappedConcurrently: the same, with the swap racing the
// calls instead of placed between check and open: whatever moment each
// call meets, it posts the file's own content or nothing.
func TestSendFileSwappedConcurrently(t *testing.T) {
	tr := newTree(t)
	ws := tr.ws
	target := filepath.Join(ws, "flip")
	const good = "the workspace's own file\n"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tmpFile, tmpLink, tmpFIFO := filepath.Join(ws, ".f"), filepath.Join(ws, ".l"), filepath.Join(ws, ".p")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			switch i % 3 {
			case 0:
				if err = os.WriteFile(tmpFile, []byte(good), 0o644); err == nil {
					err = os.Rename(tmpFile, target)
				}
			case 1:
				if err = os.Symlink(tr.outside, tmpLink); err == nil {
					err = os.Rename(tmpLink, target)
				}
			case 2:
				if err = syscall.Mkfifo(tmpFIFO, 0o644); err == nil {
					err = os.Rename(tmpFIFO, target)
				}
			}
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	s, p := newServer(ws, 1<<20)
	for range 500 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			callTool(t, s, sendFileName, map[string]any{"path": "flip"})
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("send_file blocked on a swapped-in FIFO")
		}
	}
	for _, f := range p.got() {
		if string(f.Data) != good {
			t.Fatalf("posted %q: not the workspace's file", f.Data)
		}
	}
}
