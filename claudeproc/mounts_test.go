package claudeproc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/testcli"
)

// TestNestMounts: parents first, whatever the order given; what no runner
// could show as asked is refused.
func TestNestMounts(t *testing.T) {
	tests := []struct {
		name    string
		in      []Mount
		want    []string // paths in order
		wantErr string
	}{
		{name: "parents first", in: []Mount{{"/r/c/worktrees/a", ReadWrite}, {"/r/c/worktrees", Empty}, {"/r/c", ReadOnly}, {"/r/c/hooks", Empty}},
			want: []string{"/r/c", "/r/c/hooks", "/r/c/worktrees", "/r/c/worktrees/a"}},
		{name: "none", want: nil},
		{name: "relative", in: []Mount{{"r/c", ReadOnly}}, wantErr: "absolute"},
		{name: "unclean", in: []Mount{{"/r/c/../d", ReadOnly}}, wantErr: "clean"},
		{name: "the root", in: []Mount{{"/", ReadOnly}}, wantErr: "other than /"},
		{name: "twice", in: []Mount{{"/r/c", ReadOnly}, {"/r/c", ReadWrite}}, wantErr: "two mounts at /r/c"},
		{name: "holding the working directory", in: []Mount{{"/w", ReadOnly}}, wantErr: "holds the working directory"},
		{name: "the working directory", in: []Mount{{"/w/t", Empty}}, wantErr: "holds the working directory"},
		{name: "inside the working directory", in: []Mount{{"/w/t/.git", ReadOnly}}, wantErr: "holds the working directory"},
		{name: "an unknown access", in: []Mount{{"/r/c", Access(7)}}, wantErr: "unknown access"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NestMounts(tt.in, "/w/t")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, m := range got {
				paths = append(paths, m.Path)
			}
			if !slices.Equal(paths, tt.want) {
				t.Errorf("order %q, want %q", paths, tt.want)
			}
		})
	}
}

// TestSandboxMounts: in real bubblewrap a read-only mount cannot be
// written, a read-write one can, an empty one hides what it holds but
// shows a mount inside it; one inside a hidden path (also through a link)
// does not start. The oracle is the host's file system.
func TestSandboxMounts(t *testing.T) {
	testcli.Bwrap(t)
	base := t.TempDir()
	work, state, repo := filepath.Join(base, "work"), filepath.Join(base, "state"), filepath.Join(base, "repo")
	for _, d := range []string{work, filepath.Join(state, "x"), filepath.Join(repo, "rw"), filepath.Join(repo, "hidden", "own")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "hidden", "other"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(filepath.Join(state, "x"), link); err != nil {
		t.Fatal(err)
	}
	sb := Sandbox{HomeBase: filepath.Join(base, "homes"), Hide: []string{state}}
	script := "touch " + repo + "/ro-written; touch " + repo + "/rw/rw-written; touch " + repo + "/hidden/own/own-written; " +
		"test -e " + repo + "/hidden/other || touch " + work + "/other-hidden"
	mounts := []Mount{{repo, ReadOnly}, {filepath.Join(repo, "rw"), ReadWrite},
		{filepath.Join(repo, "hidden"), Empty}, {filepath.Join(repo, "hidden", "own"), ReadWrite}}
	if err := runSandboxed(t, sb, work, mounts, script); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		filepath.Join(repo, "ro-written"): false, filepath.Join(repo, "rw", "rw-written"): true,
		filepath.Join(repo, "hidden", "own", "own-written"): true, filepath.Join(work, "other-hidden"): true,
	} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", p, err == nil, want)
		}
	}
	for _, m := range []Mount{{filepath.Join(state, "x"), ReadOnly}, {link, ReadWrite}} {
		if err := runSandboxed(t, sb, work, []Mount{m}, "true"); err == nil || !strings.Contains(err.Error(), "inside "+state) {
			t.Errorf("mount %s: err %v, want it refused", m.Path, err)
		}
	}
}

// runSandboxed runs a shell script in sb with mounts.
func runSandboxed(t *testing.T, sb Sandbox, dir string, mounts []Mount, script string) error {
	t.Helper()
	files := make([]*os.File, 3)
	for i := range files {
		var err error
		if files[i], err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
			t.Fatal(err)
		}
	}
	h, err := sb.Start(context.Background(), Spec{
		Bin: "sh", Args: []string{"-c", script}, Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH")},
		Session: Session{Channel: "console/main"}, Mounts: mounts,
		Stdin: files[0], Stdout: files[1], Stderr: files[2],
	})
	if err != nil {
		return err
	}
	_, err = h.Wait()
	return err
}
