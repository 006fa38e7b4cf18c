package store

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// flockTool is util-linux's flock(1): an oracle outside this package for
// whether the lock file is locked.
func flockTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("flock(1) (util-linux) is not installed")
	}
	return p
}

// lockedElsewhere asks flock(1) whether file can be locked now.
func lockedElsewhere(t *testing.T, file string) bool {
	t.Helper()
	err := exec.Command(flockTool(t), "--nonblock", "--exclusive", file, "true").Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return false
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return true
	}
	t.Fatalf("flock(1): %v", err)
	return false
}

// TestTakeLockExclusive: the first TakeLock holds the lock (flock(1) cannot
// take it, the file is 0600 and names this process), a second is refused
// naming the holder, and after Close a new one succeeds.
func TestTakeLockExclusive(t *testing.T) {
	db := filepath.Join(t.TempDir(), "claudeops.db")
	since := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	l, err := TakeLock(db, since)
	if err != nil {
		t.Fatal(err)
	}
	if !lockedElsewhere(t, LockPath(db)) {
		t.Error("flock(1) could lock the file while TakeLock holds it")
	}
	st, err := os.Stat(LockPath(db))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, mode %v; want 0600", err, st.Mode())
	}
	b, _ := os.ReadFile(LockPath(db))
	var h Holder
	if err := json.Unmarshal(b, &h); err != nil || h.PID != os.Getpid() || !h.Since.Equal(since) {
		t.Errorf("lock file holds %q (%v); want this pid and %s", b, err, since)
	}

	_, err = TakeLock(db, since.Add(time.Hour))
	var held *HeldError
	if !errors.Is(err, ErrInUse) || !errors.As(err, &held) {
		t.Fatalf("second TakeLock: %v; want a HeldError", err)
	}
	host, _ := os.Hostname()
	if !held.Known || held.Holder.PID != os.Getpid() || held.Holder.Host != host {
		t.Errorf("holder %+v; want pid %d on %s", held, os.Getpid(), host)
	}
	for _, want := range []string{db, "pid " + strconv.Itoa(os.Getpid()), "on host " + host, "since 2026-03-04T05:06:07Z"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if lockedElsewhere(t, LockPath(db)) {
		t.Error("the file is still locked after Close")
	}
	l2, err := TakeLock(db, since.Add(2*time.Hour))
	if err != nil {
		t.Fatalf("TakeLock after Close: %v", err)
	}
	l2.Close()
}

// TestTakeLockOthers: what TakeLock meets beside the database.
func TestTakeLockOthers(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name    string
		prepare func(t *testing.T, lockFile string)
		wantErr string // "" when the lock must be taken
	}{
		{"a file a killed holder left", func(t *testing.T, f string) {
			writeFile(t, f, `{"pid":999999,"host":"gone","since":"2020-01-01T00:00:00Z"}`+"\n")
		}, ""},
		{"a garbled file", func(t *testing.T, f string) { writeFile(t, f, "\x00\x01not json") }, ""},
		{"held by another program (names nobody)", func(t *testing.T, f string) {
			cmd := exec.Command(flockTool(t), "--exclusive", f, "sleep", "60")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			deadline := time.Now().Add(30 * time.Second)
			for !lockedElsewhere(t, f) {
				if time.Now().After(deadline) {
					t.Fatal("flock(1) did not take the lock")
				}
				time.Sleep(20 * time.Millisecond)
			}
		}, "is in use by another process"},
		{"a symbolic link in its place", func(t *testing.T, f string) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			writeFile(t, target, "keep me")
			if err := os.Symlink(target, f); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if b, _ := os.ReadFile(target); string(b) != "keep me" {
					t.Errorf("the link's target was written: %q", b)
				}
			})
		}, "open the lock file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "claudeops.db")
			tt.prepare(t, LockPath(db))
			l, err := TakeLock(db, now)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("TakeLock: %v", err)
				}
				defer l.Close()
				var h Holder
				b, _ := os.ReadFile(LockPath(db))
				if json.Unmarshal(b, &h) != nil || h.PID != os.Getpid() {
					t.Errorf("the lock file does not name this process: %q", b)
				}
				return
			}
			if err == nil {
				l.Close()
				t.Fatalf("TakeLock succeeded; want %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q lacks %q", err, tt.wantErr)
			}
		})
	}
}

// TestTakeLockRace: of many takers at once, exactly one holds the lock.
func TestTakeLockRace(t *testing.T) {
	db := filepath.Join(t.TempDir(), "claudeops.db")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []*Lock
	inUse := 0
	for range 16 {
		wg.Go(func() {
			l, err := TakeLock(db, time.Now())
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, l)
			case errors.Is(err, ErrInUse):
				inUse++
			default:
				t.Errorf("TakeLock: %v", err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 || inUse != 15 {
		t.Errorf("%d took the lock, %d were refused; want 1 and 15", len(won), inUse)
	}
	for _, l := range won {
		l.Close()
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
