package claudeproc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// memoryScript runs "$ <command>" through Bash, says "noted" to anything
// else, and answers "which word" from what the CLI sent: the model knows
// the word only if the request carries the earlier turn.
func memoryScript() fakeanthropic.Script {
	return func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return reply(fakeanthropic.Text("tool said: " + trs[0].Content))
		}
		text := req.LastUserText()
		switch {
		case strings.HasPrefix(text, "$ "):
			return reply(fakeanthropic.ToolUse("Bash", map[string]string{"command": text[2:], "description": "as asked"}))
		case strings.Contains(text, "which word"):
			if strings.Contains(req.Transcript(), "pineapple") {
				return reply(fakeanthropic.Text("you said pineapple"))
			}
			return reply(fakeanthropic.Text("no idea"))
		}
		return reply(fakeanthropic.Text("noted"))
	}
}

// rememberWord tells the session the word and returns its session id.
func rememberWord(t *testing.T, p *Process, r *recorder, from int) string {
	t.Helper()
	_, from = allowTurn(t, p, r, from, "remember the word pineapple")
	ev, _ := r.waitFor(from-1, "result", isResult)
	return ev.(*Result).SessionID
}

// resumeRemembers resumes session in s through runner and asks for the
// word: true when the model was sent the earlier turn.
func resumeRemembers(t *testing.T, c *cli, runner Runner, s Session, session string) bool {
	t.Helper()
	p, r := c.start(func(o *Options) { o.Runner, o.Session, o.Resume = runner, s, session })
	_ = p.SendText("which word did I say?")
	ev, _ := r.waitFor(0, "exit or result", func(ev Event) bool { _, ok := ev.(*Exited); return ok || isResult(ev) })
	t.Logf("%s, resuming %s: %s", s.HomeKey(), session, describe(ev))
	res, ok := ev.(*Result)
	return ok && !res.IsError && res.Result == "you said pineapple"
}

// homeRunner is a runner that removes a thread's home, as the bot asks
// when the thread's session ends for good.
type homeRunner interface {
	Runner
	RemoveHome(ctx context.Context, s Session) error
}

// checkResumePerThread: a's session (closed) resumes in a, not in b; once
// a's home is removed, not in a either.
func checkResumePerThread(t *testing.T, c *cli, runner homeRunner, a, b Session, session string) {
	t.Helper()
	if !resumeRemembers(t, c, runner, a, session) {
		t.Errorf("thread %s did not resume its own session", a.HomeKey())
	}
	if resumeRemembers(t, c, runner, b, session) {
		t.Errorf("thread %s resumed thread %s's session", b.HomeKey(), a.HomeKey())
	}
	if err := runner.RemoveHome(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if resumeRemembers(t, c, runner, a, session) {
		t.Errorf("thread %s resumed its session after its home was removed", a.HomeKey())
	}
}

// TestLocalHomePerThread: thread A's command (allowed) appends a command
// to every shell snapshot in the CLI's default home (~/.claude) and in its
// own; thread B's next Bash command, which sources B's snapshot first, must
// not run it: the oracle is the file it would create. The control is the
// old shared home (Local without a HomeBase), where B runs it. With a home
// per thread, HOME stays the bot user's, each thread's snapshot is in its
// own home, and a session resumes in its thread only.
func TestLocalHomePerThread(t *testing.T) {
	for _, perThread := range []bool{false, true} {
		t.Run(map[bool]string{false: "shared home (control)", true: "home per thread"}[perThread], func(t *testing.T) {
			c := newCLI(t, memoryScript())
			base := filepath.Join(t.TempDir(), "claude-homes")
			runner := Local{}
			if perThread {
				runner.HomeBase = base
			}
			const ch = "slack/T1/C1"
			a := Session{Channel: ch, Thread: ch + "/1.0"}
			b := Session{Channel: ch, Thread: ch + "/2.0"}
			start := func(s Session) (*Process, *recorder) {
				return c.start(func(o *Options) { o.Runner, o.Session, o.Guard = runner, s, &Guard{} })
			}
			marker := filepath.Join(t.TempDir(), "ran-in-b")

			pb, rb := start(b)
			out, fromB := allowTurn(t, pb, rb, 0, `$ echo "$HOME"; echo "${CLAUDE_CONFIG_DIR:-unset}"`)
			wantB := c.home + "\nunset"
			if perThread {
				wantB = c.home + "\n" + HomeIn(base, b)
			}
			if strings.TrimSpace(out) != wantB {
				t.Errorf("thread B's HOME and CLAUDE_CONFIG_DIR: %q, want %q", out, wantB)
			}
			pa, ra := start(a)
			attack := `for f in "$HOME"/.claude/shell-snapshots/* "$CLAUDE_CONFIG_DIR"/shell-snapshots/*; do ` +
				`[ -f "$f" ] && echo "touch '` + marker + `'" >> "$f" && echo "planted in $f"; done; true`
			out, fromA := allowTurn(t, pa, ra, 0, "$ "+attack)
			t.Logf("thread A: %s", out)
			if !strings.Contains(out, "planted in") {
				t.Fatalf("the attack found no snapshot to plant in, not even its own: %q", out)
			}
			allowTurn(t, pb, rb, fromB, "$ echo b-again")
			_, err := os.Stat(marker)
			if ran := err == nil; ran != !perThread {
				t.Errorf("thread B ran what thread A planted: %v, want %v", ran, !perThread)
			}
			if !perThread {
				return
			}
			for _, s := range []Session{a, b} {
				snaps, _ := filepath.Glob(filepath.Join(HomeIn(base, s), "shell-snapshots", "*"))
				if len(snaps) != 1 {
					t.Errorf("thread %s's snapshots: %v, want its own one", s.HomeKey(), snaps)
				}
				if fi, err := os.Stat(HomeIn(base, s)); err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("home of %s: %v %v", s.HomeKey(), fi, err)
				}
			}
			if _, err := os.Stat(filepath.Join(c.home, ".claude")); err == nil {
				t.Errorf("a session wrote the bot user's own ~/.claude")
			}
			session := rememberWord(t, pa, ra, fromA)
			closeAll(t, pa, pb)
			checkResumePerThread(t, c, runner, a, b, session)
		})
	}
}

// closeAll closes the processes and waits for them to end.
func closeAll(t *testing.T, ps ...*Process) {
	t.Helper()
	for _, p := range ps {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		p.Close(ctx)
		cancel()
	}
}
