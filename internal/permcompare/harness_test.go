package permcompare

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/bashoracle"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
)

// corpusCase is one line of approvals/testdata/bash-allow-corpus.jsonl: an
// allow rule (or several, each tried alone), a command, and whether a
// person who wrote the rule approved that command ("allow") or must be
// asked ("prompt").
type corpusCase = bashoracle.Case

// key groups cases that one CLI process (started with their rules) runs.
func key(c corpusCase) string { return strings.Join(c.AllRules(), "\x00") }

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	cases, err := bashoracle.LoadCorpus(filepath.Join(testcli.RepoRoot(), "approvals", "testdata", "bash-allow-corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// engine says how a session decides the calls the CLI asks about.
type engine int

const (
	// engineCLI starts the CLI with the case's rules as --allowedTools and
	// denies every call it asks about: what runs, the CLI let through.
	engineCLI engine = iota
	// engineOurs starts the CLI with no rules and answers each call it asks
	// about with approvals.Evaluate: the bot as it is.
	engineOurs
	// engineAllowAll allows every call it is asked about: the oracle's
	// self-check.
	engineAllowAll
)

func (e engine) String() string {
	return [...]string{"cli", "ours", "allow-all"}[e]
}

// outcome is what one command did in one session.
type outcome struct {
	asked     bool     // the CLI sent can_use_tool
	allowed   bool     // and the session allowed it
	cliDenied bool     // the CLI refused it by itself
	ran       bool     // Bash evaluated the command (the trace holds its eval)
	checkable bool     // the oracle knows what the rules name
	unnamed   []string // what ran that no rule names
	err       string
}

// unasked: the command ran without anyone being asked.
func (o outcome) unasked() bool { return o.ran && !o.asked }

// session is one real CLI process in a throwaway directory tree, watched
// with internal/bashoracle's parts. The CLI runs as nobody when the test
// runs as root; its PATH starts with bashoracle.Stubs (bash, sh and env
// stay real: the CLI needs them; a nested bash is traced like the top
// one); the oracle's DEBUG trap, appended to the CLI's shell snapshot and
// passed on by BASH_ENV, writes each simple command Bash is about to run;
// the work directory is hashed before and after.
type session struct {
	t       *testing.T
	eng     engine
	rules   []string
	root    string
	home    string
	hook    string // appended to the CLI's shell snapshot
	bashEnv string
	work    string
	logs    string
	trace   string
	api     *fakeanthropic.Server
	p       *claudeproc.Process
	mu      sync.Mutex
	calls   map[string]toolCall // "case N" -> the call the model makes
	nextID  int
}

// toolCall is a tool_use the fake model sends.
type toolCall struct {
	name  string
	input map[string]string
}

func newSession(t *testing.T, eng engine, rules []string, mods ...func(*claudeproc.Options)) *session {
	t.Helper()
	bin := testcli.Bin(t)
	// Not t.TempDir: its parents are 0700, out of nobody's reach.
	root, err := os.MkdirTemp("", "claudeops-permcompare-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	s := &session{t: t, eng: eng, rules: rules, root: root, calls: map[string]toolCall{}}
	s.work, s.logs, s.trace = filepath.Join(root, "work"), filepath.Join(root, "logs"), filepath.Join(root, "trace")
	home, stubs, tmp := filepath.Join(root, "home"), filepath.Join(root, "stubs"), filepath.Join(root, "tmp")
	cred := bashoracle.User()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(root, 0o755))
	must(bashoracle.MakeDirs(nil, stubs))
	must(bashoracle.MakeDirs(cred, s.work, s.logs, s.trace, home, tmp))
	must(bashoracle.Seed(s.work, cred))
	// Each stub logs to a file named after the Bash tool call it ran under
	// (RunVar, set by the hook); a program the CLI runs for itself logs
	// under its pid.
	must(bashoracle.WriteStubs(stubs, bashoracle.Stubs))
	// The trace: a file per Bash tool call; BASH_ENV carries the trap into
	// a bash the command starts.
	trap := bashoracle.Trap(fmt.Sprintf(">>%q/t.$%s", s.trace, bashoracle.RunVar))
	s.bashEnv = filepath.Join(root, "bashenv")
	must(os.WriteFile(s.bashEnv, []byte(trap), 0o644))
	s.hook = "unset -f find grep rg pkill 2>/dev/null\n" +
		fmt.Sprintf("%[1]s=\"$$-$SRANDOM\"; export %[1]s\n", bashoracle.RunVar) +
		fmt.Sprintf("export BASH_ENV=%q\n", s.bashEnv) + trap
	s.home = home
	if cred != nil {
		wrapper := filepath.Join(root, "claude-as-nobody")
		must(os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\nexec setpriv --reuid=%d --regid=%d --clear-groups -- %q \"$@\"\n", cred.Uid, cred.Gid, bin)), 0o755))
		bin = wrapper
	}

	s.api = fakeanthropic.Start(t, s.script)
	env := []string{
		"PATH=" + stubs + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + s.api.URL,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_MAX_RETRIES=1",
		"BASH_DEFAULT_TIMEOUT_MS=5000",
		"BASH_MAX_TIMEOUT_MS=5000",
		bashoracle.LogsVar + "=" + s.logs,
	}
	opts := claudeproc.Options{
		Bin: bin, Dir: s.work, Env: env, Guard: &claudeproc.Guard{},
		StopGrace: 3 * time.Second, RequestTimeout: 30 * time.Second,
	}
	for _, mod := range mods {
		mod(&opts)
	}
	if eng == engineCLI {
		for _, r := range rules {
			opts.AllowedTools = append(opts.AllowedTools, "Bash("+r+")")
		}
	}
	p, err := claudeproc.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.p = p
	t.Cleanup(func() {
		go func() {
			for range p.Events() {
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	s.installTrace()
	return s
}

// installTrace has the CLI make its shell snapshot (on its first Bash
// call, a read-only one it runs unasked) and appends the trace to it: the
// CLI sources the snapshot before each command. (It drops BASH_ENV from
// the environment of its tools, so that way is closed.)
func (s *session) installTrace() {
	s.t.Helper()
	if o := s.run("pwd", func(json.RawMessage) bool { return true }); o.err != "" {
		s.t.Fatalf("warm-up call: %s", o.err)
	}
	snaps, _ := filepath.Glob(filepath.Join(s.home, ".claude", "shell-snapshots", "snapshot-*.sh"))
	if len(snaps) != 1 {
		s.t.Fatalf("want one shell snapshot, have %q", snaps)
	}
	f, err := os.OpenFile(snaps[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + s.hook); err != nil {
		s.t.Fatal(err)
	}
	// The trace must see a command run: the check that it is in place.
	if o := s.run("pwd", func(json.RawMessage) bool { return true }); !o.ran {
		s.t.Fatalf("the trace does not see commands run: %+v", o)
	}
}

// script: "case N" makes that case's tool call; the tool result ends the
// turn.
func (s *session) script(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
	if req.IsProbe() {
		return fakeanthropic.Reply{}
	}
	if trs := req.ToolResults(); len(trs) > 0 {
		return fakeanthropic.TextReply("done")
	}
	s.mu.Lock()
	call, ok := s.calls[strings.TrimSpace(req.LastUserText())]
	s.mu.Unlock()
	if !ok {
		return fakeanthropic.TextReply("no such case")
	}
	return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse(call.name, call.input)}}
}

// run has the model ask for cmd and reports what happened. allow decides
// the calls the CLI asks about.
func (s *session) run(cmd string, allow func(input json.RawMessage) bool) outcome {
	s.t.Helper()
	return s.runCall(toolCall{"Bash", map[string]string{"command": cmd, "description": "corpus case"}}, allow)
}

// runCall has the model make call; for Bash, what ran is traced.
func (s *session) runCall(call toolCall, allow func(input json.RawMessage) bool) outcome {
	s.t.Helper()
	cmd := call.input["command"]
	s.mu.Lock()
	s.nextID++
	prompt := "case " + strconv.Itoa(s.nextID)
	s.calls[prompt] = call
	s.mu.Unlock()

	traceBefore, logsBefore := names(s.trace), names(s.logs)
	workBefore, err := bashoracle.Snapshot(s.work)
	if err != nil {
		return outcome{err: err.Error()}
	}
	var o outcome
	if err := s.p.SendText(prompt); err != nil {
		return outcome{err: err.Error()}
	}
	timeout := time.NewTimer(90 * time.Second)
	defer timeout.Stop()
wait:
	for {
		select {
		case ev, ok := <-s.p.Events():
			if !ok {
				return outcome{err: "the CLI exited: " + s.p.ExitInfo().Reason + " " + s.p.StderrTail()}
			}
			switch e := ev.(type) {
			case *claudeproc.ControlRequest:
				if e.CanUseTool == nil {
					continue
				}
				o.asked = true
				if allow(e.CanUseTool.Input) {
					o.allowed = true
					err = s.p.Allow(e.RequestID, nil, nil)
				} else {
					err = s.p.Deny(e.RequestID, "not approved", false)
				}
				if err != nil {
					return outcome{err: err.Error()}
				}
			case *claudeproc.Result:
				o.cliDenied = !o.asked && len(e.PermissionDenials) > 0
				break wait
			}
		case <-timeout.C:
			return outcome{err: "timed out"}
		}
	}

	// The runs of this call: trace files that appeared and hold its eval.
	var rep bashoracle.Report
	tops := map[string]bool{}
	for _, name := range newNames(s.trace, traceBefore) {
		b, err := os.ReadFile(filepath.Join(s.trace, name))
		if err != nil {
			return outcome{err: err.Error()}
		}
		cmds, ok := evalBody(bashoracle.Records(b))
		if !ok {
			continue // a bash the CLI ran for itself
		}
		o.ran = true
		tops[strings.TrimPrefix(name, "t.")] = true
		rep.Traced = append(rep.Traced, cmds...)
	}
	for _, name := range newNames(s.logs, logsBefore) {
		if !tops[strings.TrimPrefix(name, "call.")] {
			continue // a program the CLI ran for itself
		}
		cs, err := bashoracle.ReadCalls(filepath.Join(s.logs, name))
		if err != nil {
			return outcome{err: err.Error()}
		}
		rep.Calls = append(rep.Calls, cs...)
	}
	workAfter, err := bashoracle.Snapshot(s.work)
	if err != nil {
		return outcome{err: err.Error()}
	}
	rep.Changed = bashoracle.Changed(workBefore, workAfter)
	o.checkable, o.unnamed = unnamedRuns(s.rules, cmd, rep)
	return o
}

func names(dir string) map[string]bool {
	m := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		m[e.Name()] = true
	}
	return m
}

func newNames(dir string, before map[string]bool) []string {
	var out []string
	for n := range names(dir) {
		if !before[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// evalBody cuts the CLI's wrapper off a trace: what comes after its
// `eval '<cmd>'`, up to the `pwd -P >| <file>` it runs after it.
func evalBody(recs []string) ([]string, bool) {
	i := slices.IndexFunc(recs, func(r string) bool { return strings.HasPrefix(r, "eval ") })
	if i < 0 {
		return nil, false
	}
	body := recs[i+1:]
	if n := len(body); n > 0 && strings.HasPrefix(body[n-1], "pwd -P >| ") {
		body = body[:n-1]
	}
	return body, true
}

// unnamedRuns says what of a run no rule names (bashoracle.Report.Unnamed).
// A rule that is not plain words (an exact compound command) names nothing
// the oracle can check, unless the command is that very rule.
func unnamedRuns(rules []string, cmd string, rep bashoracle.Report) (bool, []string) {
	for _, r := range rules {
		if !strings.HasSuffix(r, ":*") && strings.TrimSpace(cmd) == strings.TrimSpace(r) {
			return true, nil // that very string was approved
		}
	}
	return rep.Unnamed(rules...)
}
