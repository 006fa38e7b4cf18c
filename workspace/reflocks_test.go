package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A ref lock a dead git left in a clone (a fetch cut off by the bot's
// death) is removed before the next fetch, which then goes through; one a
// live git may hold is not: made since this manager started, or while a
// git of another bot reaches the remote from the clone (its shared flock).
// The kept cases show the failure the removal prevents.
func TestDeadRefLocksDropped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lock      string // under the clone
		old       bool   // made before the manager started
		liveFetch bool   // another bot's git reaches the remote meanwhile
		dropped   bool
	}{
		{name: "a tracking branch's, left by a dead fetch", lock: "refs/remotes/origin/main.lock", old: true, dropped: true},
		{name: "packed-refs', left by a dead fetch", lock: "packed-refs.lock", old: true, dropped: true},
		{name: "made since the manager started", lock: "refs/remotes/origin/main.lock"},
		{name: "while another bot's git reaches the remote", lock: "refs/remotes/origin/main.lock", old: true, liveFetch: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
			m, _ := newManager(t)
			ctx := testCtx(t)
			if _, err := m.Check(ctx, rem.dir); err != nil {
				t.Fatal(err)
			}
			tip := rem.commit("main", map[string]string{"b.txt": "b\n"}, "more")
			r, err := m.repoRef(rem.dir)
			if err != nil {
				t.Fatal(err)
			}
			lock := filepath.Join(r.clone, filepath.FromSlash(tc.lock))
			writeFile(t, filepath.Dir(lock), filepath.Base(lock), "")
			if tc.old {
				old := time.Now().Add(-time.Minute)
				if err := os.Chtimes(lock, old, old); err != nil {
					t.Fatal(err)
				}
				if m, err = New(Options{Dir: m.Dir()}); err != nil { // the restarted bot
					t.Fatal(err)
				}
			}
			if tc.liveFetch {
				f, err := m.openCloneLock(r)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
					t.Fatal(err)
				}
			}
			_, err = m.Check(ctx, rem.dir)
			_, statErr := os.Stat(lock)
			if dropped := os.IsNotExist(statErr); dropped != tc.dropped {
				t.Fatalf("lock removed: %v, want %v (Check: %v)", dropped, tc.dropped, err)
			}
			if !tc.dropped {
				if err == nil || !strings.Contains(err.Error(), "File exists") {
					t.Fatalf("Check with a live lock = %v, want git's failure to take it", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check after a dead git's lock: %v", err)
			}
			if got := gitOK(t, "--git-dir="+r.clone, "rev-parse", "refs/remotes/origin/main"); strings.TrimSpace(got) != tip {
				t.Errorf("origin/main at %s after the fetch, want %s", got, tip)
			}
		})
	}
}
