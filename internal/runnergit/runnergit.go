// Package runnergit is for tests: git inside a session of a runner. The
// real CLI, driven by the fake model API (internal/fakeanthropic), runs
// git commands with its Bash tool in a worktree package workspace made,
// shown the clone's directories workspace.Manager.SessionDirs names, as
// the bot shows them. Run first does what a developer would (status,
// diff, log, add, commit, checkout -b), then what a hostile session would
// to make the bot's own later git calls run something (core.fsmonitor,
// core.hooksPath, a filter with a .gitattributes, an alias, include and
// includeIf, config.worktree with extensions.worktreeConfig, a hook in
// the clone's hooks/, another thread's administrative directory, an
// alternate object store, a push), then the bot's snapshot, diff, commit
// and push. The oracles are outside our code: marker files that only a
// program run on the host could write, the clone and the remote read by
// the real git.
//
// Each runner's tests call Run with the runner (claudeproc's sandbox
// tests, claudeproc/docker's and claudeproc/kubernetes' engine tests).
//
// Files: runnergit.go (Bed, Run, the session), scenario.go (the commands
// and their oracles).
package runnergit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/workspace"
)

// Bed is where Run works.
type Bed struct {
	Runner claudeproc.Runner
	// Isolated says the runner shows the session only what it is given
	// (sandbox, docker, kubernetes); false: Local, the control, under
	// which a session reaches the whole clone.
	Isolated bool
	// Bin is the CLI as the runner resolves it.
	Bin string
	// Env is the CLI's whole environment for the fake model API at url.
	Env func(url string) []string
	// Base is an empty directory the runner can show sessions (under a
	// kubernetes runner's claim; outside /tmp for the sandbox, which has
	// a /tmp of its own): the remote, the workspaces and the markers go
	// there.
	Base string
	// Own, when set, gives the session's user what the bot made for it
	// (the clone and the worktrees), as a bot running as that user would
	// have made them.
	Own func(t *testing.T, paths ...string)
	// Session names the session to the runner.
	Session claudeproc.Session
}

// turnTimeout bounds one turn: a Pod's CLI on a loaded machine is slow.
const turnTimeout = 4 * time.Minute

// session is the CLI running in the worktree, its events read as they
// come.
type session struct {
	t      *testing.T
	p      *claudeproc.Process
	api    *fakeanthropic.Server
	events chan claudeproc.Event
}

// start starts the CLI in wt, shown the clone's session directories dirs.
func start(t *testing.T, b Bed, wt workspace.Worktree, dirs []workspace.SessionDir) *session {
	t.Helper()
	api := fakeanthropic.Start(t, commandScript())
	// Launched as the bot launches every session, with the guard: the
	// repository's instructions reach the model, its settings never run.
	p, err := claudeproc.Start(context.Background(), claudeproc.Options{
		Bin: b.Bin, Dir: wt.Path, Env: b.Env(api.URL), Runner: b.Runner, Session: b.Session,
		Mounts: mounts(dirs), StopGrace: 10 * time.Second, RequestTimeout: time.Minute,
		Guard: &claudeproc.Guard{}, SkillsBase: filepath.Join(b.Base, "skills"),
	})
	if err != nil {
		t.Fatalf("start the session: %v", err)
	}
	s := &session{t: t, p: p, api: api, events: make(chan claudeproc.Event, 1024)}
	go func() {
		defer close(s.events)
		for ev := range p.Events() {
			s.events <- ev
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p.Close(ctx)
		for range s.events {
		}
	})
	return s
}

// mounts are the session directories as the bot hands them to a runner.
func mounts(dirs []workspace.SessionDir) []claudeproc.Mount {
	out := make([]claudeproc.Mount, 0, len(dirs))
	for _, d := range dirs {
		a := map[workspace.DirAccess]claudeproc.Access{
			workspace.Readable: claudeproc.ReadOnly, workspace.Writable: claudeproc.ReadWrite, workspace.Hidden: claudeproc.Empty,
			workspace.Scratch: claudeproc.Scratch,
		}[d.Access]
		out = append(out, claudeproc.Mount{Path: d.Path, Access: a})
	}
	return out
}

// commandScript is a model that runs each user message as a Bash command
// and then says what it printed.
func commandScript() fakeanthropic.Script {
	return func(_ context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.Text("tool said: " + trs[0].Content)}}
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{
			fakeanthropic.ToolUse("Bash", map[string]string{"command": req.LastUserText(), "description": "as asked"})}}
	}
}

// bash has the model run cmd, allows it, and returns what it printed.
func (s *session) bash(cmd string) string {
	s.t.Helper()
	if err := s.p.SendText(cmd); err != nil {
		s.t.Fatal(err)
	}
	deadline := time.After(turnTimeout)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatalf("the session ended during %q", cmd)
			}
			switch ev := ev.(type) {
			case *claudeproc.ControlRequest:
				if ev.CanUseTool != nil {
					if err := s.p.Allow(ev.RequestID, nil, nil); err != nil {
						s.t.Fatal(err)
					}
				}
			case *claudeproc.Result:
				return strings.TrimPrefix(ev.Result, "tool said: ")
			}
		case <-deadline:
			s.t.Fatalf("no result for %q within %s", cmd, turnTimeout)
		}
	}
}

// git runs the real git on the host, outside any repository's
// configuration, as the oracle; it fails the test on an error unless ok
// is given.
func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := gitOK(args...)
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitOK(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.invalid", "GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.invalid"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// newRemote is a bare repository with one commit on main.
func newRemote(t *testing.T, base string) string {
	t.Helper()
	remote, seed := filepath.Join(base, "remote.git"), filepath.Join(base, "seed")
	git(t, "init", "-q", "--bare", "--initial-branch=main", remote)
	git(t, "init", "-q", "--initial-branch=main", seed)
	for name, body := range repoSetup {
		p := filepath.Join(seed, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, "-C", seed, "add", "README", "CLAUDE.md", ".claude")
	git(t, "-C", seed, "commit", "-q", "-m", "first")
	git(t, "-C", seed, "push", "-q", remote, "main")
	return remote
}

// repoSetup is the repository's own Claude Code setup, as a team would
// commit it: its instructions, rules, subagents and skills (the skills
// built by the bot, shown read-only) reach the model in every runner (the
// markers); what its settings would make run never does:
// hooks, an apiKeyHelper and a status line command would leave hookMark in
// the worktree. (Each key's own test, with a control that shows it taking
// effect unguarded, is claudeproc's TestRealCLIRepositoryHostileSettings;
// the runners get the same arguments.)
var repoSetup = map[string]string{
	"README":                       "hello\n",
	"CLAUDE.md":                    "Team rule: RUNNER-CLAUDE-MD-MARK.\n",
	".claude/rules/style.md":       "Style rule: RUNNER-RULE-MARK.\n",
	".claude/agents/reviewer.md":   "---\nname: runner-reviewer\ndescription: Reviews changes (RUNNER-AGENT-MARK)\n---\nYou review.\n",
	".claude/skills/lint/SKILL.md": "---\nname: lint\ndescription: Lints the tree (RUNNER-SKILL-MARK)\nallowed-tools: Bash\n---\nRun the linter.\n",
	".claude/settings.json": `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ` + hookMark + `"}]}],"UserPromptSubmit":[{"hooks":[{"type":"command","command":"touch ` + hookMark + `"}]}],"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"touch ` + hookMark + `"}]}]},` +
		`"apiKeyHelper":"touch ` + hookMark + `; echo sk-repo","statusLine":{"type":"command","command":"touch ` + hookMark + `"}}`,
}

// hookMark is the file the repository's hooks would write in the
// worktree, which every runner lets the session write.
const hookMark = "repo-hook-ran"

// checkRepoSetup: the model was sent the repository's instructions, rules,
// subagents and skills, and none of its settings' commands ran.
func (s *session) checkRepoSetup(worktree string) {
	s.t.Helper()
	var all strings.Builder
	for _, r := range s.api.Requests() {
		all.Write(r.Body)
	}
	for _, mark := range []string{"RUNNER-CLAUDE-MD-MARK", "RUNNER-RULE-MARK", "RUNNER-AGENT-MARK", "RUNNER-SKILL-MARK"} {
		if !strings.Contains(all.String(), mark) {
			s.t.Errorf("the repository's %s never reached the model", mark)
		}
	}
	if _, err := os.Stat(filepath.Join(worktree, hookMark)); err == nil {
		s.t.Errorf("a command of the repository's .claude/settings.json (a hook, apiKeyHelper, statusLine) ran in the session")
	}
}
