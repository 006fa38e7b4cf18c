package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileLinksInClone: links planted where the bot's git would follow
// them (packed-refs to a secret file, whose first line git would print in
// its error; a branch's reflog to a file, to which update-ref would
// append; objects/ and refs/ directories elsewhere, into which git would
// write an object or a ref) are refused and removed before git runs; then
// commit and push work. The oracles: the secret in no error, the files
// and directories the links named unchanged. With the check off (the
// control), the secret reaches git's error and the reflog line the file.
func TestHostileLinksInClone(t *testing.T) {
	for _, control := range []bool{false, true} {
		t.Run(map[bool]string{false: "checked", true: "control"}[control], func(t *testing.T) {
			m, _ := newManager(t)
			rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
			wt := create(t, m, rem.dir, "one")
			clone := cloneOf(m, wt)
			outside := t.TempDir()
			secret, target, dir := filepath.Join(outside, "token"), filepath.Join(outside, "bashrc"), filepath.Join(outside, "dir")
			writeFile(t, outside, "token", "xoxb-secret-line\n")
			writeFile(t, outside, "bashrc", "")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			m.checkOff = control
			plant := func(link, to string) {
				t.Helper()
				p := filepath.Join(clone, link)
				_ = os.RemoveAll(p)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(to, p); err != nil {
					t.Fatal(err)
				}
			}
			plant("packed-refs", secret)
			plant("logs/refs/heads/"+wt.Branch, target)
			writeFile(t, wt.Path, "b.txt", "b\n")
			_, _, err := m.Commit(testCtx(t), wt, "work", Person{})
			if control {
				if err == nil || !strings.Contains(err.Error(), "xoxb-secret-line") {
					t.Errorf("control: git read the linked packed-refs: %v", err)
				}
				if err := os.Remove(filepath.Join(clone, "packed-refs")); err != nil {
					t.Fatal(err)
				}
				if _, _, err := m.Commit(testCtx(t), wt, "work", Person{}); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(target); len(b) == 0 {
					t.Errorf("control: update-ref appended nothing to the linked reflog")
				}
				return
			}
			if !errors.Is(err, ErrTampered) || strings.Contains(err.Error(), "xoxb") ||
				!strings.Contains(err.Error(), "packed-refs is a link") || !strings.Contains(err.Error(), "logs/refs/heads/"+wt.Branch+" is a link") {
				t.Fatalf("commit with links planted: %v", err)
			}
			plant("objects/zz", dir)
			plant("refs/tags", dir)
			if _, err := m.Snapshot(testCtx(t), wt); !errors.Is(err, ErrTampered) {
				t.Fatalf("snapshot with links planted: %v", err)
			}
			if _, changed, err := m.Commit(testCtx(t), wt, "work", Person{}); err != nil || !changed {
				t.Fatalf("commit after the refusal: %v %v", changed, err)
			}
			if err := m.Push(testCtx(t), wt, ""); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(target); len(b) != 0 {
				t.Errorf("a reflog line reached the linked file: %q", b)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("git wrote into the linked directory: %v", left)
			}
		})
	}
}
