package permcompare

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
)

// corpusCase is one line of approvals/testdata/bash-allow-corpus.jsonl: an
// allow rule (or several, each tried alone), a command, and whether a
// person who wrote the rule approved that command ("allow") or must be
// asked ("prompt").
type corpusCase struct {
	Rule  string   `json:"rule"`
	Rules []string `json:"rules"`
	Cmd   string   `json:"cmd"`
	Want  string   `json:"want"`
	Why   string   `json:"why"`
}

func (c corpusCase) rules() []string {
	if c.Rule != "" {
		return append([]string{c.Rule}, c.Rules...)
	}
	return c.Rules
}

// key groups cases that one CLI process (started with their rules) runs.
func (c corpusCase) key() string { return strings.Join(c.rules(), "\x00") }

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join(testcli.RepoRoot(), "approvals", "testdata", "bash-allow-corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("corpus line %d: %v", n, err)
		}
		if len(c.rules()) == 0 || c.Cmd == "" || (c.Want != "allow" && c.Want != "prompt") {
			t.Fatalf("corpus line %d: want rule(s), cmd and want allow|prompt: %+v", n, c)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
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

// stubNames are the programs on the CLI's PATH that only log their argv:
// what corpus commands name or might sneak in. bash, sh and env stay real
// (the CLI needs them); a nested bash is traced like the top one.
var stubNames = []string{
	"git", "ls", "cat", "head", "tail", "wc", "grep", "npm", "go", "make", "touch", "rm", "mv", "cp",
	"curl", "wget", "xargs", "find", "sudo", "python3", "node", "sed", "awk",
	"tee", "chmod", "ln", "mkdir", "date", "id", "x", "sleep", "echo", "printf",
}

// nobody is the user the CLI runs as when the tests run as root.
const nobody = 65534

// session is one real CLI process in a throwaway directory tree. The CLI
// runs as nobody when the test runs as root; its PATH starts with stubs
// that log their argv; BASH_ENV puts a DEBUG trap into every bash the Bash
// tool starts (and any bash those start), writing each simple command Bash
// is about to run; the work directory is hashed before and after.
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
	asNobody := os.Getuid() == 0
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(root, 0o755))
	for _, d := range []string{s.work, s.logs, s.trace, home, stubs, tmp} {
		must(os.Mkdir(d, 0o755))
		if asNobody && d != stubs {
			must(os.Chown(d, nobody, nobody))
		}
	}
	for name, content := range map[string]string{"f": "keep\n", "a.go": "package a\n", "-rf": "", "README.md": "# x\n"} {
		p := filepath.Join(s.work, name)
		must(os.WriteFile(p, []byte(content), 0o644))
		if asNobody {
			must(os.Chown(p, nobody, nobody))
		}
	}
	// Each stub appends its argc and argv, NUL-terminated, to a file named
	// after the Bash tool call it ran under.
	const stub = "#!/bin/sh\nprintf '%s\\0' \"$#\" \"${0##*/}\" \"$@\" >>\"$PCMP_LOGS/call.${PCMP_TOP:-none}\"\n"
	for _, name := range stubNames {
		must(os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755))
	}
	// The trap: each simple command Bash is about to run, in a file per
	// Bash tool call (PCMP_TOP); set -T carries it into functions,
	// subshells and substitutions, BASH_ENV into a bash the command starts.
	trap := fmt.Sprintf("set -T\ntrap 'builtin printf \"%%s\\0\" \"$BASH_COMMAND\" >>%q/t.$PCMP_TOP' DEBUG\n", s.trace)
	s.bashEnv = filepath.Join(root, "bashenv")
	must(os.WriteFile(s.bashEnv, []byte(trap), 0o644))
	s.hook = "unset -f find grep rg pkill 2>/dev/null\n" +
		"PCMP_TOP=\"$$-$SRANDOM\"; export PCMP_TOP\n" +
		fmt.Sprintf("export BASH_ENV=%q\n", s.bashEnv) + trap
	s.home = home
	if asNobody {
		wrapper := filepath.Join(root, "claude-as-nobody")
		must(os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\nexec setpriv --reuid=%d --regid=%d --clear-groups -- %q \"$@\"\n", nobody, nobody, bin)), 0o755))
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
		"PCMP_LOGS=" + s.logs,
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
	workBefore, err := hashTree(s.work)
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
	var traced []string
	tops := map[string]bool{}
	for _, name := range newNames(s.trace, traceBefore) {
		recs, err := readRecords(filepath.Join(s.trace, name))
		if err != nil {
			return outcome{err: err.Error()}
		}
		cmds, ok := evalBody(recs)
		if !ok {
			continue // a bash the CLI ran for itself
		}
		o.ran = true
		tops[strings.TrimPrefix(name, "t.")] = true
		traced = append(traced, cmds...)
	}
	var calls [][]string
	for _, name := range newNames(s.logs, logsBefore) {
		if !tops[strings.TrimPrefix(name, "call.")] {
			continue // a program the CLI ran for itself
		}
		cs, err := readCalls(filepath.Join(s.logs, name))
		if err != nil {
			return outcome{err: err.Error()}
		}
		calls = append(calls, cs...)
	}
	workAfter, err := hashTree(s.work)
	if err != nil {
		return outcome{err: err.Error()}
	}
	var changed []string
	for name, sum := range workAfter {
		if workBefore[name] != sum {
			changed = append(changed, name)
		}
	}
	for name := range workBefore {
		if _, ok := workAfter[name]; !ok {
			changed = append(changed, name)
		}
	}
	o.checkable, o.unnamed = unnamedRuns(s.rules, cmd, traced, calls, changed)
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

func readRecords(name string) ([]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	recs := strings.Split(string(b), "\x00")
	return recs[:len(recs)-1], nil
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

// readCalls reads a stub log: argc, then the base name and the arguments,
// each NUL-terminated.
func readCalls(name string) ([][]string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	fields := strings.Split(string(b), "\x00")
	fields = fields[:len(fields)-1]
	var calls [][]string
	for len(fields) > 0 {
		n, err := strconv.Atoi(fields[0])
		if err != nil || n+2 > len(fields) {
			return nil, fmt.Errorf("stub log %s: bad record %q", name, fields)
		}
		calls = append(calls, fields[1:n+2])
		fields = fields[n+2:]
	}
	return calls, nil
}

// hashTree maps each entry under dir to its mode and content hash.
func hashTree(dir string) (map[string]string, error) {
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		m[p[len(dir)+1:]] = sum
		return nil
	})
	return m, err
}

// unnamedRuns says what of a run no rule names: each traced simple command
// and each stub call must start with one rule's words, redirections may
// only go to /dev/null or dup a descriptor, and no file may change. A rule
// that is not plain words (an exact compound command) names nothing the
// oracle can check, unless the command is that very rule.
func unnamedRuns(rules []string, cmd string, traced []string, calls [][]string, changed []string) (bool, []string) {
	for _, r := range rules {
		if !strings.HasSuffix(r, ":*") && strings.TrimSpace(cmd) == strings.TrimSpace(r) {
			return true, nil // that very string was approved
		}
	}
	var words [][]string
	for _, r := range rules {
		if w, ok := ruleWords(r); ok {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return false, nil
	}
	var out []string
	for _, bc := range traced {
		ok := false
		for _, w := range words {
			if tracedViolation(bc, w) == "" {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, fmt.Sprintf("ran %q", bc))
		}
	}
	for _, argv := range calls {
		ok := false
		for _, w := range words {
			base := w[0][strings.LastIndexByte(w[0], '/')+1:]
			if len(argv) >= len(w) && argv[0] == base && slices.Equal(argv[1:len(w)], w[1:]) {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, fmt.Sprintf("called %q", argv))
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		out = append(out, fmt.Sprintf("changed files %q", changed))
	}
	return true, out
}

// ruleWords splits a rule's prefix on blanks; only plain words qualify.
func ruleWords(rule string) ([]string, bool) {
	words := strings.Fields(strings.TrimSuffix(rule, ":*"))
	for _, w := range words {
		if strings.ContainsAny(w, `'"\$*?[]{}~#;&|<>()`+"`") {
			return nil, false
		}
	}
	return words, len(words) > 0
}

// tracedViolation checks one $BASH_COMMAND as Bash prints it: its first
// words must be the rule's, literally (quotes aside), and a redirection
// must go to /dev/null or dup one descriptor to another. (The same reading
// as the Bash oracle of approvals/bashdiff_test.go.)
func tracedViolation(bc string, rule []string) string {
	toks := traceTokens(bc)
	if len(toks) < len(rule) {
		return "fewer words than the rule"
	}
	for i, r := range rule {
		if toks[i].redir || !toks[i].literal || toks[i].text != r {
			return fmt.Sprintf("word %d is not %q", i, r)
		}
	}
	for i := len(rule); i < len(toks); i++ {
		tk := toks[i]
		if !tk.redir || isFDDup(tk.raw) {
			continue
		}
		if i+1 < len(toks) && toks[i+1].raw == "/dev/null" && strings.Trim(tk.raw, "0123456789&<>") == "" {
			i++
			continue
		}
		return fmt.Sprintf("redirection %q", tk.raw)
	}
	return ""
}

// isFDDup: "2>&1", ">&2", "1>&2".
func isFDDup(s string) bool {
	s = strings.TrimLeft(s, "0123456789")
	if len(s) < 3 || (s[0] != '<' && s[0] != '>') || s[1] != '&' {
		return false
	}
	return strings.Trim(s[2:], "0123456789") == ""
}

type traceToken struct {
	raw     string
	text    string // quotes removed
	literal bool   // no unquoted or double-quoted $ or `, no unquoted glob
	redir   bool   // holds an unquoted < or >
}

// traceTokens splits a traced command on unquoted blanks.
func traceTokens(s string) []traceToken {
	var (
		toks []traceToken
		cur  = traceToken{literal: true}
		in   bool
	)
	flush := func() {
		if in {
			toks = append(toks, cur)
		}
		cur, in = traceToken{literal: true}, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
				cur.literal = false
			}
			cur.text += s[i+1 : i+1+j]
			i += j + 1
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '$' || s[i] == '`' {
					cur.literal = false
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				cur.text += string(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.text += string(s[i])
		default:
			if strings.IndexByte("<>", c) >= 0 {
				cur.redir = true
			}
			if strings.IndexByte("$`*?[]{}~();&|!", c) >= 0 {
				cur.literal = false
			}
			cur.text += string(c)
		}
		cur.raw += s[start:min(i+1, len(s))]
		in = true
	}
	flush()
	return toks
}
