package claudeproc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// The repository's contributions under the guard, with the real CLI: its
// instruction files reach the model, its settings never take effect. The
// table of what was measured is in docs/SECURITY.md ("What a repository
// contributes").

// repoInstructions is a repository's instruction files, each with a marker.
var repoInstructions = map[string]string{
	"CLAUDE.md":                  "Use tabs. MARK_CLAUDE_MD\n@docs/conventions.md\n",
	"docs/conventions.md":        "Name tests after behaviour. MARK_IMPORTED\n",
	".claude/CLAUDE.md":          "Keep commits small. MARK_DOT_CLAUDE_MD\n",
	".claude/rules/go.md":        "Wrap errors. MARK_RULE\n",
	".claude/rules/nested/sh.md": "Quote variables. MARK_NESTED_RULE\n",
}

// writeTree writes files (path: content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// firstReminder is the first block of the first user message of the
// conversation: the system-reminder in which the CLI sends the project's
// instructions.
func firstReminder(req *fakeanthropic.Request) string {
	for _, m := range req.Messages {
		if m.Role == "user" && len(m.Content) > 0 {
			return m.Content[0].Text
		}
	}
	return ""
}

// requestLog is every request body the fake API received, as one text.
func requestLog(api *fakeanthropic.Server) string {
	var b strings.Builder
	for _, r := range api.Requests() {
		b.Write(r.Body)
	}
	return b.String()
}

// TestRealCLIRepositoryInstructions: under the guard the repository's
// CLAUDE.md, .claude/CLAUDE.md, an @import and its rules reach the model
// as the same text in the same place as without the guard (the first user
// message's system-reminder).
func TestRealCLIRepositoryInstructions(t *testing.T) {
	hi := func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return reply(fakeanthropic.Text("hi"))
	}
	run := func(t *testing.T, guarded bool, plant func(dir string)) *cli {
		c := newCLI(t, hi)
		writeTree(t, c.dir, repoInstructions)
		if plant != nil {
			plant(c.dir)
		}
		p, r := c.start(func(o *Options) {
			if guarded {
				o.Guard = &Guard{}
			}
		})
		if err := p.SendText("hello"); err != nil {
			t.Fatal(err)
		}
		r.waitFor(0, "result", isResult)
		return c
	}
	t.Run("same-as-unguarded", func(t *testing.T) {
		guarded := run(t, true, nil)
		control := run(t, false, nil)
		got := firstReminder(guarded.api.Requests()[0])
		for _, m := range []string{"MARK_CLAUDE_MD", "MARK_IMPORTED", "MARK_DOT_CLAUDE_MD", "MARK_RULE", "MARK_NESTED_RULE"} {
			if !strings.Contains(got, m) {
				t.Errorf("%s did not reach the model under the guard; first user block:\n%s", m, got)
			}
		}
		want := strings.ReplaceAll(firstReminder(control.api.Requests()[0]), control.dir, guarded.dir)
		if got != want {
			t.Errorf("the model is sent other instructions than without the guard:\nguarded:\n%s\nunguarded:\n%s", got, want)
		}
	})
}

// TestRealCLIRepositoryInstructionsNotFromParents: a CLAUDE.md or rule in
// a directory above the working directory (the workspaces directory, which
// under the local runner an approved command of another thread could
// write) does not reach the model under the guard; the repository's own
// does. The control: unguarded, the CLI sends the parents' too.
func TestRealCLIRepositoryInstructionsNotFromParents(t *testing.T) {
	run := func(guarded bool) string {
		c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
			return reply(fakeanthropic.Text("hi"))
		})
		writeTree(t, c.dir, map[string]string{"CLAUDE.md": "PARENT_TOP\n", "ws/CLAUDE.md": "PARENT_WS\n", "ws/.claude/rules/r.md": "PARENT_RULE\n"})
		c.dir = filepath.Join(c.dir, "ws", "repo")
		writeTree(t, c.dir, repoInstructions)
		p, r := c.start(guardedOrLocal(guarded))
		if err := p.SendText("hello"); err != nil {
			t.Fatal(err)
		}
		r.waitFor(0, "result", isResult)
		return requestLog(c.api)
	}
	got := run(true)
	for _, m := range []string{"PARENT_TOP", "PARENT_WS", "PARENT_RULE"} {
		if strings.Contains(got, m) {
			t.Errorf("guarded: %s, from a directory above the working directory, reached the model", m)
		}
	}
	if !strings.Contains(got, "MARK_CLAUDE_MD") {
		t.Errorf("guarded: the repository's own CLAUDE.md did not reach the model")
	}
	if control := run(false); !strings.Contains(control, "PARENT_WS") {
		t.Errorf("unguarded, the parent's CLAUDE.md did not reach the model either: the test proves nothing")
	}
}

// TestRealCLIRepositoryInstructionsLeadingOut: instruction files that lead
// out of the working directory send nothing of the outside file, guarded;
// the legitimate CLAUDE.md still reaches the model.
func TestRealCLIRepositoryInstructionsLeadingOut(t *testing.T) {
	out := t.TempDir()
	secret := func(n string) string { return "SECRET_" + strings.ToUpper(strings.ReplaceAll(n, "-", "_")) }
	for _, n := range []string{"abs", "rel", "import-link", "top-link", "rule-link", "nested-link"} {
		writeTree(t, out, map[string]string{n + ".md": secret(n) + "\n"})
	}
	writeTree(t, out, map[string]string{"rules/r.md": secret("rule-dir") + "\n", "dot/CLAUDE.md": secret("dot-dir") + "\n"})
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dir string)
	}{
		{"imports", func(t *testing.T, dir string) {
			// An absolute import, a ../ import and an import that is a symlink out.
			writeTree(t, dir, map[string]string{"CLAUDE.md": repoInstructions["CLAUDE.md"] +
				"@" + filepath.Join(out, "abs.md") + "\n@" + relPath(t, dir, filepath.Join(out, "rel.md")) + "\n@inner.md\n"})
			symlink(t, filepath.Join(out, "import-link.md"), filepath.Join(dir, "inner.md"))
			symlink(t, filepath.Join(out, "rule-link.md"), filepath.Join(dir, ".claude/rules/link.md"))
			symlink(t, filepath.Join(out, "rules"), filepath.Join(dir, ".claude/rules/linked"))
			symlink(t, filepath.Join(out, "nested-link.md"), filepath.Join(dir, "sub/CLAUDE.md"))
		}},
		{"symlinked-files", func(t *testing.T, dir string) {
			// CLAUDE.md itself and the whole .claude directory lead out.
			for _, f := range []string{"CLAUDE.md", ".claude"} {
				if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
			symlink(t, filepath.Join(out, "top-link.md"), filepath.Join(dir, "CLAUDE.md"))
			symlink(t, filepath.Join(out, "dot"), filepath.Join(dir, ".claude"))
			symlink(t, filepath.Join(out, "nested-link.md"), filepath.Join(dir, "sub/CLAUDE.md"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := leadingOutRun(t, true, tc.plant)
			for _, n := range []string{"abs", "rel", "import-link", "top-link", "rule-link", "rule-dir", "nested-link", "dot-dir"} {
				if strings.Contains(log, secret(n)) {
					t.Errorf("%s: a file outside the working directory reached the model", secret(n))
				}
			}
			if tc.name == "imports" && !strings.Contains(log, "MARK_CLAUDE_MD") {
				t.Errorf("the repository's own CLAUDE.md did not reach the model")
			}
			// The control: without the guard the CLI sends outside files.
			if control := leadingOutRun(t, false, tc.plant); !strings.Contains(control, secret("nested-link")) {
				t.Errorf("without the guard the nested symlinked CLAUDE.md did not reach the model either: the test proves nothing")
			}
		})
	}
}

// leadingOutRun plants a repository, has the model read sub/a.txt (which
// loads sub/CLAUDE.md on a laptop), allows what is asked, and returns
// every request the model was sent; unguarded, locally, where the outside
// files are in view.
func leadingOutRun(t *testing.T, guarded bool, plant func(t *testing.T, dir string)) string {
	var dir string
	n := 0
	c := newCLI(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if n++; n == 1 {
			return reply(fakeanthropic.ToolUse("Read", map[string]string{"file_path": filepath.Join(dir, "sub", "a.txt")}))
		}
		return reply(fakeanthropic.Text("hi"))
	})
	dir = c.dir
	writeTree(t, dir, repoInstructions)
	writeTree(t, dir, map[string]string{"sub/a.txt": "hello\n"})
	plant(t, dir)
	p, r := c.start(guardedOrLocal(guarded))
	if err := p.SendText("hello"); err != nil {
		t.Fatal(err)
	}
	answerAll(t, p, r, func(*ControlRequest) bool { return true })
	if len(c.api.Requests()) < 2 {
		t.Fatalf("the model's Read never came back: %s", r.dump())
	}
	return requestLog(c.api)
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

func relPath(t *testing.T, from, to string) string {
	t.Helper()
	r, err := filepath.Rel(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// answerAll answers every can_use_tool of the turn (allow says which are
// allowed; the rest are denied) until its result, and returns the names
// of the tools the host was asked about.
func answerAll(t *testing.T, p *Process, r *recorder, allow func(*ControlRequest) bool) (asked []string) {
	t.Helper()
	for from := 0; ; {
		ev, i := r.waitFor(from, "can_use_tool or result", func(ev Event) bool { return isCanUseTool(ev) || isResult(ev) })
		from = i + 1
		cr, ok := ev.(*ControlRequest)
		if !ok {
			return asked
		}
		asked = append(asked, cr.CanUseTool.ToolName)
		var err error
		if allow(cr) {
			err = p.Allow(cr.RequestID, nil, nil)
		} else {
			err = p.Deny(cr.RequestID, "no", false)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// guardedOrLocal guards a session, or runs the control unguarded with the
// local runner: what a control proves the oracle sees must be in view of
// the CLI (another runner hides the host's files from it).
func guardedOrLocal(guarded bool) func(*Options) {
	return func(o *Options) {
		if guarded {
			o.Guard = &Guard{}
		} else {
			o.Runner = Local{}
		}
	}
}
