package workspace

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A session's own git reaches the bot's clone through the worktree's
// ".git" file: under the local runner an approved "git config" in the
// worktree writes the config the bot's git reads next, on the host. Each
// vector is planted twice: as a session would (the real git config run in
// the worktree) and by writing the clone's files directly. The oracles: a
// marker file the planted command writes, real git reading the bare remote
// (and the redirect's target, a bare repository or an HTTP server that
// counts requests), real git reading the clone's config.
//
// Each vector's control runs the manager's operations with its config
// check off: the vector then runs or redirects (unless marked beneath:
// the command-line configuration stops it too). The session's plant is
// checked to fail with the config lock removed (its git config succeeds).

// plantEnv is one remote, manager and worktree, and what a vector points
// at: the trap, a bare repository and an HTTP server a redirect reaches.
type plantEnv struct {
	t     *testing.T
	m     *Manager
	rem   *remote
	wt    Worktree
	snap  string // a snapshot taken before any plant
	clone string
	trap  trap
	evil  string // a bare repository
	web   string // an HTTP server asking for credentials
	hits  *atomic.Int32
}

func newPlantEnv(t *testing.T) *plantEnv {
	t.Helper()
	e := &plantEnv{t: t, rem: newRemote(t, "main", map[string]string{"app.txt": "one\n"}), hits: new(atomic.Int32)}
	e.trap = quitTrap(t)
	e.evil = filepath.Join(t.TempDir(), "evil.git")
	gitOK(t, "init", "--quiet", "--bare", e.evil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		e.hits.Add(1)
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	e.web = srv.URL + "/r.git"
	e.m, _ = newManager(t)
	e.wt = create(t, e.m, e.rem.dir, "planted")
	e.clone = cloneOf(e.m, e.wt)
	writeFile(t, e.wt.Path, "app.txt", "one\ntwo\n")
	snap, err := e.m.Snapshot(testCtx(t), e.wt)
	if err != nil {
		t.Fatal(err)
	}
	e.snap = snap
	return e
}

// quitTrap is a trap that ends at once (a cat would wait on git forever
// as an upload-pack or receive-pack).
func quitTrap(t *testing.T) trap {
	t.Helper()
	tr := newTrap(t)
	body := "#!/bin/sh\necho \"$0 $*\" >> '" + tr.marker + "'\nexit 1\n"
	if err := os.WriteFile(tr.script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return tr
}

// sprung says what of the vector reached its aim: the trap ran, the
// redirect's repository got a ref, the HTTP server got a request.
func (e *plantEnv) sprung() string {
	var what []string
	if ok, log := e.trap.sprung(); ok {
		what = append(what, "ran: "+strings.TrimSpace(log))
	}
	if refs := gitOK(e.t, "--git-dir="+e.evil, "for-each-ref"); refs != "" {
		what = append(what, "pushed to the redirect: "+refs)
	}
	if n := e.hits.Load(); n > 0 {
		what = append(what, "the redirect's HTTP server was asked")
	}
	return strings.Join(what, "; ")
}

// configVector is what a session would configure, with the files it
// would write beside (in the worktree, or in the clone by hand).
type configVector struct {
	name string
	// keys are the session's "git config <key> <value>" in the worktree.
	keys func(e *plantEnv) [][2]string
	// worktreeKeys are "git config --worktree" keys (config.worktree).
	worktreeKeys func(e *plantEnv) [][2]string
	// files are written in both plants: none is configuration by itself.
	files func(e *plantEnv)
	// direct are files git reads as configuration, written in the direct
	// plant only (no git command of a session writes them).
	direct func(e *plantEnv)
	// beneath: the command-line configuration stops the vector too, so
	// its control, with the check off, springs nothing.
	beneath bool
}

func filterAttributes(e *plantEnv) {
	writeFile(e.t, e.wt.Path, ".gitattributes", "* filter=x\n")
	writeFile(e.t, e.clone, "info/attributes", "* filter=x\n")
}

var configVectors = []configVector{{
	name: "clean and smudge filter with .gitattributes",
	keys: func(e *plantEnv) [][2]string {
		return [][2]string{{"filter.x.clean", e.trap.script}, {"filter.x.smudge", e.trap.script}}
	},
	files: filterAttributes,
}, {
	name: "remote.origin.uploadpack",
	keys: func(e *plantEnv) [][2]string { return [][2]string{{"remote.origin.uploadpack", e.trap.script}} },
}, {
	name: "remote.origin.receivepack",
	keys: func(e *plantEnv) [][2]string { return [][2]string{{"remote.origin.receivepack", e.trap.script}} },
}, {
	name: "push redirected: pushurl and pushInsteadOf",
	keys: func(e *plantEnv) [][2]string {
		return [][2]string{{"remote.origin.pushurl", e.evil}, {"url." + e.evil + ".pushInsteadOf", e.rem.dir}}
	},
}, {
	name: "fetch and push redirected: insteadOf",
	keys: func(e *plantEnv) [][2]string { return [][2]string{{"url." + e.evil + ".insteadOf", e.rem.dir}} },
}, {
	name: "core.sshCommand with insteadOf to ssh",
	keys: func(e *plantEnv) [][2]string {
		return [][2]string{{"url.ssh://evil.invalid/r.git.insteadOf", e.rem.dir}, {"core.sshCommand", e.trap.script}}
	},
	beneath: true, // the command line names ssh itself; the push fails, unredirected
}, {
	name: "include.path",
	keys: func(e *plantEnv) [][2]string {
		return [][2]string{{"include.path", filepath.Join(e.wt.Path, "inc.cfg")}}
	},
	files: func(e *plantEnv) {
		writeFile(e.t, e.wt.Path, "inc.cfg", "[filter \"x\"]\n\tclean = "+e.trap.script+"\n")
		filterAttributes(e)
	},
}, {
	name: "credential.helper and core.askPass behind an HTTP redirect",
	keys: func(e *plantEnv) [][2]string {
		return [][2]string{{"url." + e.web + ".insteadOf", e.rem.dir},
			{"credential.helper", "!" + e.trap.script}, {"core.askPass", e.trap.script}}
	},
}, {
	name: "extensions.worktreeConfig with config.worktree",
	keys: func(e *plantEnv) [][2]string { return [][2]string{{"extensions.worktreeConfig", "true"}} },
	worktreeKeys: func(e *plantEnv) [][2]string {
		return [][2]string{{"filter.x.clean", e.trap.script}, {"remote.origin.uploadpack", e.trap.script}}
	},
	files: filterAttributes,
}, {
	name: "core.alternateRefsCommand with alternates",
	keys: func(e *plantEnv) [][2]string { return [][2]string{{"core.alternateRefsCommand", e.trap.script}} },
	files: func(e *plantEnv) {
		writeFile(e.t, e.clone, "objects/info/alternates", filepath.Join(e.rem.dir, "objects")+"\n")
	},
}, {
	name: "gpg.program with commit.gpgSign",
	keys: func(e *plantEnv) [][2]string {
		return [][2]string{{"gpg.program", e.trap.script}, {"commit.gpgSign", "true"}}
	},
	beneath: true, // the command line turns signing off
}, {
	name:  "commondir leading to a config elsewhere",
	files: filterAttributes,
	direct: func(e *plantEnv) {
		common := filepath.Join(e.t.TempDir(), "common.git")
		gitOK(e.t, "clone", "--quiet", "--bare", e.clone, common)
		writeFile(e.t, common, "config", "[core]\n\tbare = true\n[filter \"x\"]\n\tclean = "+e.trap.script+
			"\n[remote \"origin\"]\n\turl = "+e.evil+"\n\tuploadpack = "+e.trap.script+"\n")
		writeFile(e.t, e.clone, "commondir", common+"\n")
	},
}}

// configText is keys as git writes them, made by git on a file of its own.
func configText(t *testing.T, keys [][2]string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "cfg")
	writeFile(t, filepath.Dir(f), "cfg", "")
	for _, kv := range keys {
		gitOK(t, "config", "--file", f, "--add", kv[0], kv[1])
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// plantDirect writes the vector into the clone's files, as a session's
// "cat >> …/config" would.
func (e *plantEnv) plantDirect(v configVector) {
	e.t.Helper()
	if v.files != nil {
		v.files(e)
	}
	if v.keys != nil {
		f, err := os.OpenFile(filepath.Join(e.clone, "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			e.t.Fatal(err)
		}
		_, err = f.WriteString(configText(e.t, v.keys(e)))
		if err := errors.Join(err, f.Close()); err != nil {
			e.t.Fatal(err)
		}
	}
	if v.worktreeKeys != nil {
		text := configText(e.t, v.worktreeKeys(e))
		writeFile(e.t, e.clone, "config.worktree", text)
		writeFile(e.t, e.clone, "worktrees/"+filepath.Base(e.wt.Path)+"/config.worktree", text)
	}
	if v.direct != nil {
		v.direct(e)
	}
}

// plantBySession runs the session's git config in the worktree, as the
// model's approved command would; it returns what git said to each.
func (e *plantEnv) plantBySession(v configVector) []error {
	e.t.Helper()
	if v.files != nil {
		v.files(e)
	}
	var errs []error
	set := func(worktree bool, keys [][2]string) {
		for _, kv := range keys {
			args := []string{"-C", e.wt.Path, "config"}
			if worktree {
				args = append(args, "--worktree")
			}
			_, err := gitRun(e.t, nil, append(args, kv[0], kv[1])...)
			errs = append(errs, err)
		}
	}
	if v.keys != nil {
		set(false, v.keys(e))
	}
	if v.worktreeKeys != nil {
		set(true, v.worktreeKeys(e))
	}
	return errs
}

// plantOp is one operation of the manager, on the env's worktree.
type plantOp struct {
	name string
	run  func(e *plantEnv) error
}

var plantOps = []plantOp{
	{"Create", func(e *plantEnv) error { _, err := e.m.Create(testCtx(e.t), e.rem.dir, "second"); return err }},
	{"Check", func(e *plantEnv) error { _, err := e.m.Check(testCtx(e.t), e.rem.dir); return err }},
	{"Snapshot", func(e *plantEnv) error { _, err := e.m.Snapshot(testCtx(e.t), e.wt); return err }},
	{"Changes", func(e *plantEnv) error { _, err := e.m.Changes(testCtx(e.t), e.wt, e.wt.Base, e.snap); return err }},
	{"Diff", func(e *plantEnv) error { _, _, err := e.m.Diff(testCtx(e.t), e.wt); return err }},
	{"Commit", func(e *plantEnv) error { _, _, err := e.m.Commit(testCtx(e.t), e.wt, "planted", Person{}); return err }},
	{"Unpushed", func(e *plantEnv) error { _, err := e.m.Unpushed(testCtx(e.t), e.wt); return err }},
	{"Push", func(e *plantEnv) error { return e.m.Push(testCtx(e.t), e.wt, "") }},
	{"Remove", func(e *plantEnv) error { _, err := e.m.Remove(testCtx(e.t), e.wt); return err }},
}

// configList is the clone's config as real git reads it.
func (e *plantEnv) configList() string {
	e.t.Helper()
	return gitOK(e.t, "config", "--file", filepath.Join(e.clone, "config"), "--list")
}

// mustBeRestored fails unless the clone holds its config as it was
// before the plant, and nothing beside it that git would read.
func (e *plantEnv) mustBeRestored(what string, want []byte) {
	e.t.Helper()
	got, err := os.ReadFile(filepath.Join(e.clone, "config"))
	if err != nil || !bytes.Equal(got, want) {
		e.t.Errorf("%s: the clone's config was not restored (%v):\n%s", what, err, got)
	}
	for _, p := range []string{"commondir", "config.worktree", "worktrees/" + filepath.Base(e.wt.Path) + "/config.worktree"} {
		if _, err := os.Lstat(filepath.Join(e.clone, p)); err == nil {
			e.t.Errorf("%s: %s is still in the clone", what, p)
		}
	}
}

// TestHostileConfigControl: with the manager's config check off, each
// vector planted directly in the clone runs or redirects through the
// manager's own operations (unless beneath), so that its absence in the
// tests below means something.
func TestHostileConfigControl(t *testing.T) {
	for _, v := range configVectors {
		t.Run(v.name, func(t *testing.T) {
			e := newPlantEnv(t)
			e.plantDirect(v)
			e.m.checkOff = true
			for _, op := range plantOps {
				_ = op.run(e)
			}
			got := e.sprung()
			switch {
			case v.beneath && got != "":
				t.Errorf("the command line should stop this vector, yet: %s", got)
			case !v.beneath && got == "":
				t.Fatal("positive control: nothing ran or was redirected with the check off; the test would prove nothing")
			}
			t.Logf("with the check off: %q", got)
		})
	}
}

// TestHostileConfigPlantedDirectly: the clone's config (or a file git
// reads as configuration) written by hand before each operation: the
// operation is refused with ErrTampered, nothing planted runs, and the
// clone is restored. Checked to fail with the check removed (the
// control above shows what then runs).
func TestHostileConfigPlantedDirectly(t *testing.T) {
	for _, v := range configVectors {
		t.Run(v.name, func(t *testing.T) {
			e := newPlantEnv(t)
			clean, err := os.ReadFile(filepath.Join(e.clone, "config"))
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range plantOps {
				e.plantDirect(v)
				err := op.run(e)
				if got := e.sprung(); got != "" {
					t.Fatalf("%s after the plant: %s", op.name, got)
				}
				if !errors.Is(err, ErrTampered) {
					t.Errorf("%s = %v, want ErrTampered", op.name, err)
				}
				e.mustBeRestored(op.name, clean)
			}
			// Restored, everything works and publishes what it should.
			e.publishes()
		})
	}
}

// TestHostileConfigPlantedBySession: the session's git config in the
// worktree is refused by git itself (the clone's config lock is never
// free); the clone's config stays as it was and every operation runs,
// running nothing planted. Checked to fail with the lock removed: the
// session's git config then succeeds.
func TestHostileConfigPlantedBySession(t *testing.T) {
	for _, v := range configVectors {
		if v.keys == nil && v.worktreeKeys == nil {
			continue // no git command writes it: planted directly only
		}
		t.Run(v.name, func(t *testing.T) {
			e := newPlantEnv(t)
			before := e.configList()
			for i, err := range e.plantBySession(v) {
				if err == nil {
					t.Fatalf("the session's git config #%d succeeded", i)
				}
				if msg := err.Error(); !strings.Contains(msg, "could not lock config file") && !strings.Contains(msg, "worktreeConfig is enabled") {
					t.Errorf("the session's git config #%d failed otherwise: %v", i, err)
				}
			}
			if after := e.configList(); after != before {
				t.Fatalf("the clone's config changed:\n%s\nwas:\n%s", after, before)
			}
			for _, op := range plantOps[:len(plantOps)-1] { // Remove last, in publishes
				if err := op.run(e); err != nil {
					t.Errorf("%s: %v", op.name, err)
				}
			}
			if got := e.sprung(); got != "" {
				t.Fatalf("the session's plant: %s", got)
			}
			e.publishes()
		})
	}
}

// publishes commits, pushes and removes the worktree, and checks with
// real git that the remote got the commit, with the content unfiltered,
// and that nothing ran or went elsewhere.
func (e *plantEnv) publishes() {
	e.t.Helper()
	ctx := testCtx(e.t)
	commit, _, err := e.m.Commit(ctx, e.wt, "the work", Person{})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.m.Push(ctx, e.wt, ""); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.m.Remove(ctx, e.wt); err != nil {
		e.t.Fatal(err)
	}
	if got := e.sprung(); got != "" {
		e.t.Fatalf("publishing: %s", got)
	}
	if got := e.rem.rev(e.wt.Branch); got != commit {
		e.t.Errorf("remote %s at %s, want %s", e.wt.Branch, got, commit)
	}
	if got := e.rem.git("show", commit+":app.txt"); got != "one\ntwo\n" {
		e.t.Errorf("app.txt on the remote = %q", got)
	}
}

// A clone made before the config lock existed gets it on its first use,
// and works on.
func TestOlderCloneSealed(t *testing.T) {
	e := newPlantEnv(t)
	lock := filepath.Join(e.clone, lockName)
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Snapshot(testCtx(t), e.wt); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(lock); err != nil || !fi.IsDir() {
		t.Fatalf("no lock after use: %v", err)
	}
	// Real git agrees: the config cannot be written.
	if _, err := gitRun(t, nil, "--git-dir="+e.clone, "config", "core.fsmonitor", e.trap.script); err == nil {
		t.Error("git config wrote the sealed clone's config")
	}
	e.publishes()
}

// The clone swapped for a link to a repository of the session's making,
// whose config runs code: refused, the link removed (never followed), and
// the next Create clones again.
func TestHostileCloneReplacedByLink(t *testing.T) {
	e := newPlantEnv(t)
	evil := filepath.Join(t.TempDir(), "evil-clone.git")
	gitOK(t, "clone", "--quiet", "--bare", e.rem.dir, evil)
	writeFile(t, evil, "config", "[core]\n\tbare = true\n\tfsmonitor = "+e.trap.script+
		"\n[remote \"origin\"]\n\turl = "+e.rem.dir+"\n\tuploadpack = "+e.trap.script+"\n")
	if err := os.Rename(e.clone, e.clone+"-moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(evil, e.clone); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Check(testCtx(t), e.rem.dir); !errors.Is(err, ErrTampered) {
		t.Errorf("Check through a link = %v, want ErrTampered", err)
	}
	if _, err := os.Lstat(e.clone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link is still there: %v", err)
	}
	if _, err := e.m.Create(testCtx(t), e.rem.dir, "again"); err != nil {
		t.Fatal(err)
	}
	if got := e.sprung(); got != "" {
		t.Fatal(got)
	}
	if fi, err := os.Lstat(e.clone); err != nil || !fi.IsDir() {
		t.Errorf("no clone made again: %v", err)
	}
}
