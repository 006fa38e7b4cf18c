package approvals

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/bashoracle"
)

// The oracle for Bash allow rules is Bash itself (internal/bashoracle). A
// command an allow rule matches is run the way Claude Code 2.1.330 runs it,
// as an unprivileged user, in a throwaway directory, with PATH holding only
// stub programs; the run violates the rule if anything but the rule's
// command runs, a file in the directory appears, changes or goes, or a
// redirection other than to /dev/null or a dup of a descriptor is made.

// loadBashCorpus reads testdata/bash-allow-corpus.jsonl, one
// bashoracle.Case a line.
func loadBashCorpus(tb testing.TB) []bashoracle.Case {
	tb.Helper()
	cases, err := bashoracle.LoadCorpus(filepath.Join("testdata", "bash-allow-corpus.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return cases
}

// TestBashAllowDifferential checks every corpus case against matchBash and
// runs every command an allow rule matches under the Bash oracle.
func TestBashAllowDifferential(t *testing.T) {
	o := bashoracle.New(t)
	cases := loadBashCorpus(t)
	var allowed, ran int
	for _, c := range cases {
		rule := ""
		for _, r := range c.AllRules() {
			if matchBash(r, c.Cmd, false) {
				rule = r
				break
			}
		}
		if got := rule != ""; got != (c.Want == "allow") {
			t.Errorf("rules %q on %q: allow = %v, want %s (%s)", c.AllRules(), c.Cmd, got, c.Want, c.Why)
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
		run, err := o.Run(c.Cmd)
		if err != nil {
			t.Fatalf("oracle on %q: %v", c.Cmd, err)
		}
		for _, v := range run.Violations(rule) {
			t.Errorf("allow %s matched %q (%s), but under Bash: %s", rule, c.Cmd, c.Why, v)
		}
	}
	t.Logf("%d corpus cases, %d allowed, %d run under bash", len(cases), allowed, ran)
}
