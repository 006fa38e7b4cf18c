package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/testrunner"
)

// TestStateDirDefaults: where the bot keeps its state when told nothing,
// and that the crypto store and recovery key follow the database.
func TestStateDirDefaults(t *testing.T) {
	home, xdg, own := t.TempDir(), t.TempDir(), t.TempDir()
	work := t.TempDir()
	tests := []struct {
		name          string
		env           []string
		stateDir, db  string
		crypto, rkey  string
		protectsState bool
	}{
		{"HOME", []string{"HOME=" + home},
			home + "/.local/state/claudeops", home + "/.local/state/claudeops/claudeops.db",
			home + "/.local/state/claudeops/claudeops.matrix-crypto.db", home + "/.local/state/claudeops/claudeops.matrix-recovery-key", true},
		{"XDG_STATE_HOME wins over HOME", []string{"HOME=" + home, "XDG_STATE_HOME=" + xdg},
			xdg + "/claudeops", xdg + "/claudeops/claudeops.db", xdg + "/claudeops/claudeops.matrix-crypto.db", xdg + "/claudeops/claudeops.matrix-recovery-key", true},
		{"a relative XDG_STATE_HOME is ignored", []string{"HOME=" + home, "XDG_STATE_HOME=state"},
			home + "/.local/state/claudeops", home + "/.local/state/claudeops/claudeops.db", "", "", true},
		{"CLAUDEOPS_STATE_DIR", []string{"HOME=" + home, "XDG_STATE_HOME=" + xdg, "CLAUDEOPS_STATE_DIR=" + own},
			own, own + "/claudeops.db", own + "/claudeops.matrix-crypto.db", own + "/claudeops.matrix-recovery-key", true},
		{"CLAUDEOPS_DB alone uses no state directory", []string{"HOME=" + home, "CLAUDEOPS_DB=" + own + "/bot.db"},
			"", own + "/bot.db", own + "/bot.matrix-crypto.db", own + "/bot.matrix-recovery-key", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(append(tt.env, "CLAUDEOPS_WORKDIR="+work))
			if err != nil {
				t.Fatal(err)
			}
			if c.StateDir != tt.stateDir || c.DB != tt.db {
				t.Errorf("state dir %q, db %q; want %q, %q", c.StateDir, c.DB, tt.stateDir, tt.db)
			}
			crypto, key := matrixFiles(c)
			if tt.crypto != "" && (crypto != tt.crypto || key != tt.rkey) {
				t.Errorf("crypto %s, key %s; want %s, %s", crypto, key, tt.crypto, tt.rkey)
			}
			own := ownFiles(c)
			for _, p := range []string{c.DB, c.DB + "-wal", c.DB + "-shm", crypto, crypto + "-wal", key} {
				if !slices.Contains(own, p) {
					t.Errorf("protected paths %v lack %s", own, p)
				}
			}
			if got := slices.Contains(own, c.StateDir); got != tt.protectsState {
				t.Errorf("state dir %q protected: %v", c.StateDir, got)
			}
		})
	}
}

// TestStateApartFromWorkdir: every way the sessions' working directory can
// come to hold the bot's state (or lie inside it) stops the bot with exit
// code 78 and a message naming both, before anything is created; layouts
// that only look alike start.
func TestStateApartFromWorkdir(t *testing.T) {
	type layout struct{ workdir, stateDir, db string }
	tests := []struct {
		name  string
		setup func(root string) layout
		ok    bool
	}{
		{"state dir is the workdir", func(r string) layout { return layout{workdir: r + "/w", stateDir: r + "/w"} }, false},
		{"default state dir under a workdir of $HOME", func(r string) layout { return layout{workdir: r + "/home"} }, false},
		{"state dir inside the workdir", func(r string) layout { return layout{workdir: r + "/w", stateDir: r + "/w/.state"} }, false},
		{"workdir inside the state dir", func(r string) layout { return layout{workdir: r + "/s/repo", stateDir: r + "/s"} }, false},
		{"database inside the workdir", func(r string) layout { return layout{workdir: r + "/w", db: r + "/w/sub/claudeops.db"} }, false},
		{"workdir is /", func(r string) layout { return layout{workdir: "/", stateDir: r + "/s"} }, false},
		{"workdir climbs with ..", func(r string) layout { return layout{workdir: r + "/w/../", stateDir: r + "/s"} }, false},
		{"workdir a link to an ancestor of the state", func(r string) layout {
			symlink(t, r, r+"/w/up")
			return layout{workdir: r + "/w/up", stateDir: r + "/s"}
		}, false},
		{"state dir a link into the workdir", func(r string) layout {
			mkdir(t, r+"/w/hidden")
			symlink(t, r+"/w/hidden", r+"/statelink")
			return layout{workdir: r + "/w", stateDir: r + "/statelink"}
		}, false},
		{"database through a linked directory into the workdir", func(r string) layout {
			symlink(t, r+"/w", r+"/dblink")
			return layout{workdir: r + "/w", db: r + "/dblink/new/claudeops.db"}
		}, false},
		{"a dangling link on the state's path", func(r string) layout {
			symlink(t, r+"/nowhere", r+"/dangling")
			return layout{workdir: r + "/w", db: r + "/dangling/claudeops.db"}
		}, false},
		{"siblings", func(r string) layout { return layout{workdir: r + "/w", stateDir: r + "/s"} }, true},
		{"a sibling named like the workdir's prefix", func(r string) layout { return layout{workdir: r + "/work", stateDir: r + "/work2"} }, true},
		{"a workdir named like the state dir's prefix", func(r string) layout { return layout{workdir: r + "/state2", stateDir: r + "/state"} }, true},
		{"workdir reached through a link elsewhere", func(r string) layout {
			mkdir(t, r+"/real")
			symlink(t, r+"/real", r+"/w/link")
			return layout{workdir: r + "/w/link", stateDir: r + "/w2"}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			mkdir(t, root+"/w")
			mkdir(t, root+"/home")
			l := tt.setup(root)
			if tt.ok {
				mkdir(t, l.workdir) // a start needs its workdir to exist (startChecks)
			}
			env := []string{"HOME=" + root + "/home", "CLAUDEOPS_WORKDIR=" + l.workdir,
				"CLAUDEOPS_CLAUDE_BIN=" + fakeCLI(t, "2.1.330"), "PATH=" + os.Getenv("PATH")}
			if l.stateDir != "" {
				env = append(env, "CLAUDEOPS_STATE_DIR="+l.stateDir)
			}
			if l.db != "" {
				env = append(env, "CLAUDEOPS_DB="+l.db)
			}
			before := tree(t, root)
			var out, errb bytes.Buffer
			// The console with no input: a start that passes opens the
			// store (creating the state) and ends at once.
			code := run([]string{"console"}, testrunner.Explicit(env), strings.NewReader(""), &out, &errb)
			after := tree(t, root)
			if tt.ok {
				if code != 0 || after == before {
					t.Fatalf("exit %d, state created: %v; %s", code, after != before, errb.String())
				}
				return
			}
			if code != 78 {
				t.Fatalf("exit %d, want 78; output: %s%s", code, out.String(), errb.String())
			}
			msg := errb.String()
			want := "CLAUDEOPS_WORKDIR"
			if strings.Contains(tt.name, "dangling") {
				want = "resolve " + root + "/dangling"
			}
			if !strings.Contains(msg, want) || !strings.Contains(msg, root) {
				t.Errorf("message does not name %s and the paths: %s", want, msg)
			}
			if after != before {
				t.Errorf("a refused start changed the file system:\n%s\nthen\n%s", before, after)
			}
		})
	}
}

// TestStateConflictListedWithOtherErrors: the overlap is one more
// configuration error, reported with the others at once.
func TestStateConflictListedWithOtherErrors(t *testing.T) {
	w := t.TempDir()
	_, err := loadConfig([]string{"CLAUDEOPS_WORKDIR=" + w, "CLAUDEOPS_STATE_DIR=" + w, "CLAUDEOPS_MAX_SESSIONS=0"})
	if err == nil || !strings.Contains(err.Error(), "CLAUDEOPS_MAX_SESSIONS") || !strings.Contains(err.Error(), "CLAUDEOPS_WORKDIR ("+w+")") {
		t.Errorf("error: %v", err)
	}
}

// TestRealPathAndWithin pins the path arithmetic the checks rest on
// (fspath.Within has its own table).
func TestRealPathAndWithin(t *testing.T) {
	root := t.TempDir()
	mkdir(t, root+"/real/deep")
	symlink(t, root+"/real", root+"/link")
	for p, want := range map[string]string{
		root + "/link/deep/new/file": root + "/real/deep/new/file",
		root + "/link/../real/x":     root + "/real/x", // Abs cleans lexically first
		root + "/missing/a/b":        root + "/missing/a/b",
	} {
		if got, err := realPath(p); err != nil || got != want {
			t.Errorf("realPath(%s) = %s, %v; want %s", p, got, err, want)
		}
	}
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	mkdir(t, filepath.Dir(p))
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// tree lists what is under root, for before/after comparisons.
func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !strings.HasSuffix(p, "/claude") { // fakeCLI's script lives elsewhere
			b.WriteString(p + " " + info.Mode().String() + "\n")
		}
		return nil
	})
	return b.String()
}
