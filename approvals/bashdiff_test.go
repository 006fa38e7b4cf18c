package approvals

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBashDifferential checks the splitter against real Bash: commands made
// of shell-significant tokens that an allow rule "git:*" accepts are run
// under a DEBUG trap (PATH emptied, so nothing but builtins and functions
// the command defines can run), and every simple command Bash executes
// must start with "git". It spawns processes, so it only runs with
// APPROVALS_BASH_DIFF=<count of generated commands>, e.g. 200000.
func TestBashDifferential(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("APPROVALS_BASH_DIFF"))
	if n <= 0 {
		t.Skip("set APPROVALS_BASH_DIFF=<count> to compare with /bin/bash")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	toks := []string{
		"git", "git", "git", "x", " ", " ", "\t", ";", "&&", "||", "|", "&", "\n", "'", "\"", "\\",
		"#", "a#", "#'", "$'", "'\\''", "\\'", "\\\"", "''", "$\"", "\"$", "(", ")", ") ", " (", "{ ", " }",
		"<<", "<<-", "<<<", "EOF", ">", "<", "2>&1", ">&", "&>", "|&", ">|", "$(", "`", "<(", ">(", "${",
		"$", "=", "FOO=1 ", "rm", "\\\n", "\r", "!", "case", "in", "esac", ";;", "function", "coproc",
		"time", "[[", "]]", "alias", "do", "done", "for", "if", "then", "fi", "-c",
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "s.sh")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	ran := 0
	for range n {
		var b strings.Builder
		b.WriteString("git")
		for k := rng.IntN(16); k >= 0; k-- {
			b.WriteString(toks[rng.IntN(len(toks))])
		}
		cmd := b.String()
		if !matchBash("git:*", cmd, false) {
			continue
		}
		ran++
		prelude := "set -T\ntrap 'printf \"%s\\0\" \"$BASH_COMMAND\" >&3' DEBUG\n"
		if err := os.WriteFile(script, []byte(prelude+cmd+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, bc := range bashRan(t, bash, dir, script) {
			if bc != "git" && !strings.HasPrefix(bc, "git ") && !strings.HasPrefix(bc, "git\t") {
				t.Errorf("allow git:* matched %q, but Bash ran %q", cmd, bc)
			}
		}
	}
	t.Logf("%d of %d generated commands matched and were run", ran, n)
}

// bashRan runs script and returns the simple commands the DEBUG trap saw.
func bashRan(t *testing.T, bash, dir, script string) []string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bash, script)
	c.Dir, c.Env, c.ExtraFiles = dir, []string{"PATH=/nonexistent"}, []*os.File{w}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(r) // EOF when bash and its children exit
	_ = c.Wait()           // a non-zero exit is expected: nothing is on PATH
	var cmds []string
	for _, s := range strings.Split(out.String(), "\x00") {
		if s != "" {
			cmds = append(cmds, s)
		}
	}
	return cmds
}
