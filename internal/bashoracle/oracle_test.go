package bashoracle

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

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
		if got := TracedViolation(tt.bc, tt.rule) == ""; got != tt.ok {
			t.Errorf("TracedViolation(%q, %q) ok = %v, want %v", tt.bc, tt.rule, got, tt.ok)
		}
	}
}

// TestBashOracleCatches checks the oracle itself: commands that run more
// than the rule names must be caught, whichever way they do it, and the
// rule's own command must pass.
func TestBashOracleCatches(t *testing.T) {
	o := New(t)
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
		{"echo:*", "(cd /; echo x > \"$HOME/g\")", true},           // a subshell writing a file
	}
	for _, tt := range tests {
		rep, err := o.Run(tt.cmd)
		if err != nil {
			t.Fatalf("oracle on %q: %v", tt.cmd, err)
		}
		if got := len(rep.Violations(tt.rule)) > 0; got != tt.caught {
			t.Errorf("rule %s, %q: caught = %v, want %v (%+v)", tt.rule, tt.cmd, got, tt.caught, rep)
		}
	}
	// Commands run as nobody when the test runs as root.
	rep, err := o.Run("git $UID")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(os.Getuid())
	if os.Getuid() == 0 {
		want = fmt.Sprint(Nobody)
	}
	if len(rep.Calls) != 1 || len(rep.Calls[0]) != 2 || rep.Calls[0][1] != want {
		t.Errorf("git $UID called as %q, want uid %s", rep.Calls, want)
	}
	// A run that does not end is cut short and reported.
	o.Limit = time.Second
	if rep, err = o.Run("while :; do :; done"); err != nil {
		t.Fatal(err)
	}
	if !rep.Timeout || len(rep.Violations("git:*")) == 0 {
		t.Errorf("endless loop not reported as a timeout: %+v", rep)
	}
}

// TestOracleReport checks what a run reports, field by field, for a
// command that does a bit of everything.
func TestOracleReport(t *testing.T) {
	o := New(t)
	rep, err := o.Run(`git 'a b' "" ; rm -rf f; echo x > new; f() { ls; }; f; chmod 0 a.go`)
	if err != nil {
		t.Fatal(err)
	}
	// A function call is traced twice: as called and as entered.
	wantTraced := []string{`git 'a b' ""`, "rm -rf f", "echo x > new", "f", "f", "ls", "chmod 0 a.go"}
	if !slices.Equal(rep.Traced, wantTraced) {
		t.Errorf("traced %q, want %q", rep.Traced, wantTraced)
	}
	// Stubs log per process, so their order is the logs' order: compare
	// as sets. echo is Bash's builtin, not the stub.
	wantCalls := []string{`["git" "a b" ""]`, `["rm" "-rf" "f"]`, `["ls"]`, `["chmod" "0" "a.go"]`}
	var calls []string
	for _, c := range rep.Calls {
		calls = append(calls, fmt.Sprintf("%q", c))
	}
	slices.Sort(calls)
	slices.Sort(wantCalls)
	if !slices.Equal(calls, wantCalls) {
		t.Errorf("calls %s, want %s", calls, wantCalls)
	}
	// The stubs do nothing: rm and chmod are only logged; the redirection
	// is Bash's and creates new.
	if !slices.Equal(rep.Changed, []string{"new"}) {
		t.Errorf("changed %q, want [new]", rep.Changed)
	}
	if rep.Timeout {
		t.Error("timed out")
	}
}

// TestUnnamed checks the judgement on a report built by hand: a run is
// named when each of its parts starts with some rule's words.
func TestUnnamed(t *testing.T) {
	rep := Report{
		Traced: []string{"git status -s", "ls -l 2> /dev/null"},
		Calls:  [][]string{{"git", "status", "-s"}, {"ls", "-l"}},
	}
	tests := []struct {
		rules     []string
		checkable bool
		unnamed   int
	}{
		{[]string{"git status:*", "ls:*"}, true, 0},
		{[]string{"git:*", "/bin/ls:*"}, true, 1}, // the stub by its base name, but Bash ran ls, not /bin/ls
		{[]string{"git status:*"}, true, 2},       // ls traced and called
		{[]string{"git status && ls", "git status:*"}, true, 2},
		{[]string{"git status && ls"}, false, 0}, // not plain words: nothing to check against
		{[]string{"$x:*"}, false, 0},
	}
	for _, tt := range tests {
		ok, out := rep.Unnamed(tt.rules...)
		if ok != tt.checkable || len(out) != tt.unnamed {
			t.Errorf("Unnamed(%q) = %v, %q; want %v and %d", tt.rules, ok, out, tt.checkable, tt.unnamed)
		}
	}
	if v := rep.Violations("git status && ls"); len(v) != 1 || !strings.Contains(v[0], "not a plain prefix") {
		t.Errorf("Violations of a compound rule = %q, want the rule reported", v)
	}
	changed := Report{Changed: []string{"f"}, Stderr: "boom"}
	if v := changed.Violations("git:*"); len(v) != 2 || !strings.Contains(v[1], "boom") {
		t.Errorf("a changed file: %q, want it and the stderr", v)
	}
}

// TestChanged checks the snapshot sees a file created, one whose content
// changed, one whose mode changed and one removed, and nothing else.
func TestChanged(t *testing.T) {
	dir := t.TempDir()
	if err := Seed(dir, nil); err != nil {
		t.Fatal(err)
	}
	if err := MakeDirs(nil, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	before, err := Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "d", "new"), nil, 0o644))
	must(os.WriteFile(filepath.Join(dir, "f"), []byte("kept\n"), 0o644)) // same size, other content
	must(os.Chmod(filepath.Join(dir, "a.go"), 0o755))
	must(os.Remove(filepath.Join(dir, "-rf")))
	after, err := Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-rf", "a.go", "d/new", "f"} // d itself: same type and mode
	if got := Changed(before, after); !slices.Equal(got, want) {
		t.Errorf("Changed = %q, want %q", got, want)
	}
	if got := Changed(after, after); len(got) != 0 {
		t.Errorf("Changed with no change = %q", got)
	}
}

// TestReadCalls checks the stub log format through a real stub: arguments
// with blanks, newlines and none at all come back as they were given.
func TestReadCalls(t *testing.T) {
	dir := t.TempDir()
	if err := WriteStubs(dir, []string{"git"}); err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	cmd := fmt.Sprintf(`%s=%s %s=one; export %s %s; %s/git 'a b' '' 'c
d'; %s/git`, LogsVar, logs, RunVar, LogsVar, RunVar, dir, dir)
	if out, err := runSh(cmd); err != nil {
		t.Fatalf("stub: %v: %s", err, out)
	}
	calls, err := ReadCalls(filepath.Join(logs, "call.one"))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"git", "a b", "", "c\nd"}, {"git"}}
	if !slices.EqualFunc(calls, want, slices.Equal) {
		t.Errorf("calls %q, want %q", calls, want)
	}
	bad := filepath.Join(logs, "bad")
	if err := os.WriteFile(bad, []byte("3\x00git\x00a\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCalls(bad); err == nil {
		t.Error("a record shorter than its argc was read")
	}
}

func runSh(script string) ([]byte, error) {
	return exec.Command("/bin/sh", "-c", script).CombinedOutput()
}

// TestLoadCorpus checks a corpus line is read whole or refused: an unknown
// field (a typo) or a missing part fails the load instead of becoming a
// case read another way.
func TestLoadCorpus(t *testing.T) {
	good := `{"rule": "git:*", "rules": ["ls:*"], "cmd": "git status", "want": "allow", "why": "w"}`
	tests := []struct {
		body string
		ok   bool
	}{
		{good + "\n\n" + `{"rules": ["ls:*"], "cmd": "ls; x", "want": "prompt", "why": "w"}` + "\n", true},
		{`{"rule": "git:*", "cmd": "git", "want": "allow", "why": "w", "wnat": "prompt"}`, false},
		{`{"rule": "git:*", "cmd": "git", "want": "allow"}`, false},
		{`{"rule": "git:*", "cmd": "git", "want": "yes", "why": "w"}`, false},
		{`{"cmd": "git", "want": "allow", "why": "w"}`, false},
		{`{"rule": "git:*", "want": "allow", "why": "w"}`, false},
		{`{"rule": "git:*"`, false},
	}
	for _, tt := range tests {
		name := filepath.Join(t.TempDir(), "corpus.jsonl")
		if err := os.WriteFile(name, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		cases, err := LoadCorpus(name)
		if (err == nil) != tt.ok {
			t.Errorf("LoadCorpus(%q): err = %v, want ok %v", tt.body, err, tt.ok)
		}
		if tt.ok && (len(cases) != 2 || !slices.Equal(cases[0].AllRules(), []string{"git:*", "ls:*"})) {
			t.Errorf("LoadCorpus(%q) = %+v", tt.body, cases)
		}
	}
}
