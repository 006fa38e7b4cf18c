package workspace

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// Files people attach are saved under attachments/ in the worktree; the
// bot's staging leaves them out unless someone adds them on purpose. The
// oracle is real git reading the bare remote. Checked to fail with
// DefaultExclude emptied (photo.png is staged, committed and pushed).
func TestExcludeLeavesAttachmentsOut(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"app.txt": "one\n", "attachments/tracked.txt": "t\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "attach")
	writeFile(t, wt.Path, "app.txt", "one\ntwo\n")
	writeFile(t, wt.Path, "attachments/1a2b3c/photo.png", "PHOTO")
	writeFile(t, wt.Path, "attachments/1a2b3c/keep.txt", "kept on purpose\n")
	writeFile(t, wt.Path, "attachments/tracked.txt", "t\nchanged\n")
	writeFile(t, wt.Path, "sub/attachments/ok.txt", "not the bot's directory\n")
	writeFile(t, wt.Path, ".gitignore", "!attachments/\n!/attachments/**\n") // cannot bring them back
	// The session stages one on purpose, with its own git.
	gitOK(t, "-C", wt.Path, "add", "attachments/1a2b3c/keep.txt")

	want := []string{".gitignore", "app.txt", "attachments/1a2b3c/keep.txt", "attachments/tracked.txt", "sub/attachments/ok.txt"}
	snap, err := m.Snapshot(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Changes(ctx, wt, wt.Base, snap)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for _, f := range st.Files {
		changed = append(changed, f.Path)
	}
	slices.Sort(changed)
	if !slices.Equal(changed, want) {
		t.Errorf("changes = %v, want %v", changed, want)
	}
	patch, _, err := m.Diff(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(patch, []byte("photo.png")) || !bytes.Contains(patch, []byte("kept on purpose")) {
		t.Errorf("diff:\n%s", patch)
	}
	commit, _, err := m.Commit(ctx, wt, "work", Person{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Push(ctx, wt, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Remove(ctx, wt); err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(rem.git("ls-tree", "-r", "--name-only", "refs/heads/"+wt.Branch))
	if !slices.Equal(got, want) || rem.rev(wt.Branch) != commit {
		t.Errorf("remote %s at %s holds %v, want %v at %s", wt.Branch, rem.rev(wt.Branch), got, want, commit)
	}
}

// Options.Exclude empty: nothing is left out.
func TestExcludeNone(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"app.txt": "one\n"})
	m, _ := newManager(t, func(o *Options) { o.Exclude = []string{} })
	wt := create(t, m, rem.dir, "all")
	writeFile(t, wt.Path, "attachments/1a2b3c/photo.png", "PHOTO")
	commit, changed, err := m.Commit(testCtx(t), wt, "all", Person{})
	if err != nil || !changed {
		t.Fatalf("Commit = %v, %v", changed, err)
	}
	if got := gitOK(t, "--git-dir="+cloneOf(m, wt), "show", commit+":attachments/1a2b3c/photo.png"); got != "PHOTO" {
		t.Errorf("photo.png = %q", got)
	}
}
