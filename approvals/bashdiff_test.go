package approvals

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The oracle for Bash allow rules is Bash itself. A command an allow rule
// matches is run the way Claude Code 2.1.330 runs it (bash -c, aliases
// expanded, extglob off, eval of the command in single quotes, stdin from
// /dev/null), as an unprivileged user, in a throwaway directory, with PATH
// holding only stub programs that log their argv, and a DEBUG trap that
// writes every simple command Bash is about to run. The run violates the
// rule if anything but the rule's command runs, a file in the directory
// appears, changes or goes, or a redirection other than to /dev/null or a
// dup of a descriptor is made.

// bashCorpusCase is one line of testdata/bash-allow-corpus.jsonl.
type bashCorpusCase struct {
	Rule  string   `json:"rule"`
	Rules []string `json:"rules"` // instead of rule: allowed if any one allows, as in EvaluateCall
	Cmd   string   `json:"cmd"`
	Want  string   `json:"want"` // "allow" or "prompt"
	Why   string   `json:"why"`
}

func (c bashCorpusCase) rules() []string {
	if c.Rule != "" {
		return append([]string{c.Rule}, c.Rules...)
	}
	return c.Rules
}

func loadBashCorpus(tb testing.TB) []bashCorpusCase {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "bash-allow-corpus.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var cases []bashCorpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c bashCorpusCase
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			tb.Fatalf("corpus line %d: %v", n, err)
		}
		if len(c.rules()) == 0 || c.Cmd == "" || (c.Want != "allow" && c.Want != "prompt") || c.Why == "" {
			tb.Fatalf("corpus line %d: want rule(s), cmd, want allow|prompt and why: %+v", n, c)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cases
}

// TestBashAllowDifferential checks every corpus case against matchBash and
// runs every command an allow rule matches under the Bash oracle.
func TestBashAllowDifferential(t *testing.T) {
	o := newBashOracle(t)
	cases := loadBashCorpus(t)
	var allowed, ran int
	for _, c := range cases {
		rule := ""
		for _, r := range c.rules() {
			if matchBash(r, c.Cmd, false) {
				rule = r
				break
			}
		}
		if got := rule != ""; got != (c.Want == "allow") {
			t.Errorf("rules %q on %q: allow = %v, want %s (%s)", c.rules(), c.Cmd, got, c.Want, c.Why)
		}
		if rule == "" {
			continue
		}
		allowed++
		// Each prefix rule's words must be all that runs; an exact rule was
		// approved as a whole, so there is nothing to check it against.
		if !strings.HasSuffix(rule, ":*") && trimCommand(c.Cmd) == trimCommand(rule) {
			continue
		}
		ran++
		for _, v := range o.violations(t, rule, c.Cmd) {
			t.Errorf("allow %s matched %q (%s), but under Bash: %s", rule, c.Cmd, c.Why, v)
		}
	}
	t.Logf("%d corpus cases, %d allowed, %d run under bash", len(cases), allowed, ran)
}

// bashOracle runs commands under Bash and reports what they did.
type bashOracle struct {
	bash  string
	root  string // stubs/ and one directory per run
	stubs string
	cred  *syscall.Credential // nil: run as the current user
	limit time.Duration       // how long one run may take
}

// nobody is the unprivileged user the oracle runs as when it can.
const nobody = 65534

// oracleStubs are the programs on the oracle's PATH: every command the
// corpus and the fuzzer name, and common ones a command might sneak in.
var oracleStubs = []string{
	"git", "ls", "cat", "head", "tail", "wc", "grep", "npm", "go", "make", "touch", "rm", "mv", "cp",
	"curl", "wget", "sh", "bash", "env", "xargs", "find", "sudo", "python3", "node", "sed", "awk",
	"tee", "chmod", "ln", "mkdir", "date", "id", "x", "sleep", "true", "false", "echo", "printf",
}

// newBashOracle builds an oracle for tb, removed when tb ends; it skips the
// test when there is no bash.
func newBashOracle(tb testing.TB) *bashOracle {
	tb.Helper()
	bash := "/bin/bash"
	if _, err := os.Stat(bash); err != nil {
		if bash, err = exec.LookPath("bash"); err != nil {
			tb.Skip("no bash")
		}
	}
	// Not tb.TempDir: its parents are 0700, out of reach of nobody.
	root, err := os.MkdirTemp("", "claudeops-bash-oracle-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	o := &bashOracle{bash: bash, root: root, stubs: filepath.Join(root, "stubs"), limit: 5 * time.Second}
	if os.Getuid() == 0 {
		// No supplementary groups: root's would stay otherwise.
		o.cred = &syscall.Credential{Uid: nobody, Gid: nobody}
	} else {
		tb.Logf("not root: the oracle runs commands as uid %d, not as %d", os.Getuid(), nobody)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Mkdir(o.stubs, 0o755); err != nil {
		tb.Fatal(err)
	}
	// Each call appends its argc and argv, NUL-terminated, to a file named
	// after its pid.
	const stub = "#!/bin/sh\nprintf '%s\\0' \"$#\" \"${0##*/}\" \"$@\" >>\"$ORACLE_LOG/call.$$\"\n"
	for _, name := range oracleStubs {
		if err := os.WriteFile(filepath.Join(o.stubs, name), []byte(stub), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return o
}

// bashRun is what one command did under the oracle.
type bashRun struct {
	traced  []string   // $BASH_COMMAND before each simple command, the eval's own left out
	calls   [][]string // argv of each stub call, the program's base name first
	changed []string   // entries of the work directory created, changed or removed
	timeout bool
	stderr  string
}

// claudeScript is how Claude Code 2.1.330 has bash -c run a command, with
// the oracle's trap set just before the eval: set -T carries it into
// functions, subshells and substitutions.
func claudeScript(cmd string) string {
	return "shopt -s expand_aliases\nshopt -u extglob\nset -T\n" +
		"trap 'builtin printf \"%s\\0\" \"$BASH_COMMAND\" >&3' DEBUG\n" +
		"eval '" + strings.ReplaceAll(cmd, "'", `'\''`) + "' < /dev/null\n"
}

// run runs cmd in a fresh work directory.
func (o *bashOracle) run(cmd string) (bashRun, error) {
	dir, err := os.MkdirTemp(o.root, "run")
	if err != nil {
		return bashRun{}, fmt.Errorf("oracle dir: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return bashRun{}, fmt.Errorf("oracle dir: %w", err)
	}
	work, logs, tmp := filepath.Join(dir, "work"), filepath.Join(dir, "logs"), filepath.Join(dir, "tmp")
	if err := o.mkdirs(work, logs, tmp); err != nil {
		return bashRun{}, err
	}
	// Files for globs to find and for redirections to clobber.
	for name, content := range map[string]string{"f": "keep\n", "a.go": "package a\n", "-rf": "", "README.md": "# x\n"} {
		if err := o.writeFile(filepath.Join(work, name), content); err != nil {
			return bashRun{}, err
		}
	}
	before, err := snapshot(work)
	if err != nil {
		return bashRun{}, err
	}

	r, w, err := os.Pipe()
	if err != nil {
		return bashRun{}, fmt.Errorf("trace pipe: %w", err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), o.limit)
	defer cancel()
	c := exec.CommandContext(ctx, o.bash, "-c", claudeScript(cmd))
	var stderr bytes.Buffer
	c.Dir, c.Stderr, c.ExtraFiles = work, &stderr, []*os.File{w}
	c.Env = []string{"PATH=" + o.stubs, "HOME=" + work, "TMPDIR=" + tmp, "ORACLE_LOG=" + logs, "LANG=C.UTF-8"}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: o.cred}
	// Kill the whole group: background jobs and stubs too.
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	if err := c.Start(); err != nil {
		w.Close()
		return bashRun{}, fmt.Errorf("start bash: %w", err)
	}
	w.Close()
	countRun()
	_ = r.SetReadDeadline(time.Now().Add(o.limit + time.Second))
	var trace bytes.Buffer
	_, _ = trace.ReadFrom(r) // EOF once bash and everything it started are gone
	_ = c.Wait()             // exit status does not matter
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)

	run := bashRun{timeout: ctx.Err() != nil, stderr: stderr.String()}
	recs := strings.Split(trace.String(), "\x00")
	if len(recs) == 0 || !strings.HasPrefix(recs[0], "eval '") {
		return run, fmt.Errorf("trace does not start with the eval: %q", recs)
	}
	for _, s := range recs[1 : len(recs)-1] {
		run.traced = append(run.traced, s)
	}
	if run.calls, err = readCalls(logs); err != nil {
		return run, err
	}
	after, err := snapshot(work)
	if err != nil {
		return run, err
	}
	for name, sum := range after {
		if before[name] != sum {
			run.changed = append(run.changed, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			run.changed = append(run.changed, name)
		}
	}
	return run, nil
}

// countRun appends a byte to $CLAUDEOPS_ORACLE_COUNT, when set, so that a
// fuzzing session can tell how many commands it ran under Bash.
func countRun() {
	name := os.Getenv("CLAUDEOPS_ORACLE_COUNT")
	if name == "" {
		return
	}
	if f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		_, _ = f.Write([]byte{'.'})
		f.Close()
	}
}

// mkdirs creates directories the oracle's user can write.
func (o *bashOracle) mkdirs(dirs ...string) error {
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("oracle dir: %w", err)
		}
		if err := o.own(d); err != nil {
			return err
		}
	}
	return nil
}

func (o *bashOracle) writeFile(name, content string) error {
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		return fmt.Errorf("oracle file: %w", err)
	}
	return o.own(name)
}

// own hands name to the oracle's user, so that a command could change it.
func (o *bashOracle) own(name string) error {
	if o.cred == nil {
		return nil
	}
	if err := os.Chown(name, int(o.cred.Uid), int(o.cred.Gid)); err != nil {
		return fmt.Errorf("oracle chown: %w", err)
	}
	return nil
}

// snapshot maps each entry under dir to its type, mode and content hash.
func snapshot(dir string) (map[string]string, error) {
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
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return m, nil
}

// readCalls reads the stubs' logs: argc, then the base name and the
// arguments, each NUL-terminated.
func readCalls(logs string) ([][]string, error) {
	files, err := os.ReadDir(logs)
	if err != nil {
		return nil, fmt.Errorf("stub log: %w", err)
	}
	var calls [][]string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(logs, f.Name()))
		if err != nil {
			return nil, fmt.Errorf("stub log: %w", err)
		}
		fields := strings.Split(string(b), "\x00")
		fields = fields[:len(fields)-1]
		for len(fields) > 0 {
			n, err := strconv.Atoi(fields[0])
			if err != nil || n+2 > len(fields) {
				return nil, fmt.Errorf("stub log %s: bad record %q", f.Name(), fields)
			}
			calls = append(calls, fields[1:n+2])
			fields = fields[n+2:]
		}
	}
	return calls, nil
}

// violations runs cmd and returns how the run went beyond the allow rule.
func (o *bashOracle) violations(tb testing.TB, rule, cmd string) []string {
	tb.Helper()
	run, err := o.run(cmd)
	if err != nil {
		tb.Fatalf("oracle on %q: %v", cmd, err)
	}
	return run.violations(rule)
}

// violations returns how the run went beyond what the rule names.
func (run bashRun) violations(rule string) []string {
	words, ok := oracleRuleWords(rule)
	if !ok {
		return []string{fmt.Sprintf("rule %q is not a plain prefix the oracle can check", rule)}
	}
	var out []string
	if run.timeout {
		out = append(out, "timed out")
	}
	for _, bc := range run.traced {
		if why := tracedViolation(bc, words); why != "" {
			out = append(out, fmt.Sprintf("ran %q: %s", bc, why))
		}
	}
	base := words[0][strings.LastIndexByte(words[0], '/')+1:]
	for _, argv := range run.calls {
		if len(argv) < len(words) || argv[0] != base || !slices.Equal(argv[1:len(words)], words[1:]) {
			out = append(out, fmt.Sprintf("program called with argv %q", argv))
		}
	}
	if len(run.changed) > 0 {
		out = append(out, fmt.Sprintf("files created, changed or removed: %q", run.changed))
	}
	if len(out) > 0 && run.stderr != "" {
		out = append(out, "stderr: "+run.stderr)
	}
	return out
}

// oracleRuleWords splits a rule's prefix on blanks. The oracle's rules
// are plain words, so it needs no shell reading of its own.
func oracleRuleWords(rule string) ([]string, bool) {
	prefix := strings.TrimSuffix(rule, ":*")
	words := strings.Fields(prefix)
	for _, w := range words {
		if strings.ContainsAny(w, `'"\$*?[]{}~#;&|<>()`+"`") {
			return nil, false
		}
	}
	return words, len(words) > 0
}

// tracedViolation checks one $BASH_COMMAND, as Bash prints it: its first
// words must be the rule's, literally (quotes aside), and any redirection
// must be to /dev/null or a dup of one descriptor to another.
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
		t := toks[i]
		if !t.redir {
			continue
		}
		if isFDDup(t.raw) {
			continue
		}
		if i+1 < len(toks) && toks[i+1].raw == "/dev/null" && strings.Trim(t.raw, "0123456789&<>") == "" {
			i++
			continue
		}
		return fmt.Sprintf("redirection %q", t.raw)
	}
	return ""
}

// isFDDup: a dup of one descriptor to another, as Bash prints "2>&1" and
// ">&2" ("1>&2").
var isFDDup = regexp.MustCompile(`^[0-9]*[<>]&[0-9]+$`).MatchString

// traceToken is one blank-separated token of a traced command.
type traceToken struct {
	raw     string
	text    string // quotes removed
	literal bool   // no unquoted or double-quoted $ or `, no unquoted glob
	redir   bool   // holds an unquoted < or >
}

// traceTokens splits a traced command on unquoted blanks. It is the
// oracle's own small reading of Bash's printed form, independent of
// parseAllow.
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

func TestTraceTokens(t *testing.T) {
	tests := []struct {
		bc   string
		rule []string
		ok   bool
	}{
		{`git status`, []string{"git", "status"}, true},
		{`git 'status' "-s"`, []string{"git", "status"}, true},
		{`git st\atus`, []string{"git", "status"}, true},
		{`git status > /dev/null 2>&1 1>&2 &> /dev/null`, []string{"git", "status"}, true},
		{`git status > x`, []string{"git", "status"}, false},
		{`git status 2>&1x`, []string{"git", "status"}, false},
		{`git $x`, []string{"git", "status"}, false},
		{`touch x`, []string{"git"}, false},
		{`gi* status`, []string{"git"}, false},
		{`git`, []string{"git", "status"}, false},
	}
	for _, tt := range tests {
		if got := tracedViolation(tt.bc, tt.rule) == ""; got != tt.ok {
			t.Errorf("tracedViolation(%q, %q) ok = %v, want %v", tt.bc, tt.rule, got, tt.ok)
		}
	}
}

// TestBashOracleCatches checks the oracle itself: commands that run more
// than the rule names must be caught, whichever way they do it, and the
// rule's own command must pass.
func TestBashOracleCatches(t *testing.T) {
	o := newBashOracle(t)
	tests := []struct {
		rule, cmd string
		caught    bool
	}{
		{"git status:*", "git status -s 2>&1 >/dev/null", false},
		{"git status:*", "git 'status' \"$HOME\" *", false},
		{"echo:*", "echo hi", false},
		{"git status:*", "git status $$'\\';touch pwned;#'", true}, // issue 10: a stub
		{"git status:*", "git status; x", true},                    // another stub
		{"git status:*", "git log", true},                          // the rule's program, other words
		{"git:*", "nosuchprogram", true},                           // not on PATH: only the trace sees it
		{"git:*", "git() { :; }; git", true},                       // a function: the trace
		{"echo:*", "echo x > f", true},                             // a changed file
		{"echo:*", "echo x > new", true},                           // a new file
		{"echo:*", "echo x > ../outside", true},                    // a redirection (it fails: the dir is root's)
		{"echo:*", "eval 'echo x'", true},                          // a builtin
		{"echo:*", "sleep 10 & echo", true},                        // a stub in the background
	}
	for _, tt := range tests {
		if got := len(o.violations(t, tt.rule, tt.cmd)) > 0; got != tt.caught {
			t.Errorf("rule %s, %q: caught = %v, want %v", tt.rule, tt.cmd, got, tt.caught)
		}
	}
	// Commands run as nobody when the test runs as root.
	run, err := o.run("git $UID")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(os.Getuid())
	if o.cred != nil {
		want = fmt.Sprint(nobody)
	}
	if len(run.calls) != 1 || len(run.calls[0]) != 2 || run.calls[0][1] != want {
		t.Errorf("git $UID called as %q, want uid %s", run.calls, want)
	}
	// A run that does not end is cut short and reported.
	o.limit = time.Second
	if run, err = o.run("while :; do :; done"); err != nil {
		t.Fatal(err)
	}
	if !run.timeout {
		t.Error("endless loop not reported as a timeout")
	}
}
