// Package permcompare (tests only) weighs letting Claude Code's own
// permission engine match Bash allow rules against the bot's
// (approvals.Evaluate), on the same corpus of commands, with the real CLI
// against the fake Messages API:
//
//   - cli: the CLI is started with the case's rules as --allowedTools
//     "Bash(<rule>)" (and the bot's other launch flags), and every call it
//     asks about is denied. What runs, the CLI let through.
//   - ours: the CLI is started with no rules, as the bot starts it, and
//     each call it asks about is answered by approvals.Evaluate with the
//     case's rules. What runs, the bot let through (by our rule, or by the
//     CLI running a command it judges read-only without asking).
//
// Each run is traced (see session): what Bash ran, which programs, which
// files changed. Set CLAUDEOPS_PERMCOMPARE=1 for the whole corpus
// (approvals/testdata/bash-allow-corpus.jsonl) and
// CLAUDEOPS_PERMCOMPARE_OUT=<file> for its table; without it a handful of
// cases run.
//
// Files: compare_test.go (the comparison and its table), harness_test.go
// (the corpus, the CLI started each way, the run traced),
// denyrules_test.go (the deny rules the bot hands the CLI, enforced by the
// CLI itself).
package permcompare

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/claudeops/claudeops/approvals"
)

// smallCases run always: the rule's own command, ways past a prefix rule,
// and one the CLI's own matching lets through.
var smallCases = []corpusCase{
	{Rule: "git status:*", Cmd: "git status -s", Want: "allow", Why: "the rule's command"},
	{Rule: "git status:*", Cmd: "git status; touch pwned", Want: "prompt", Why: "a second command"},
	{Rule: "git status:*", Cmd: `git status $$'\';touch pwned;#'`, Want: "prompt", Why: "issue 10: $$ then a quote"},
	{Rule: "echo:*", Cmd: "echo x > f", Want: "prompt", Why: "a redirection to a file"},
	{Rule: "git status:*", Cmd: "git status && ls", Want: "prompt", Why: "a second command the CLI deems read-only"},
	{Rule: "command:*", Cmd: "command touch x", Want: "prompt", Why: "command runs its argument"},
}

// row is one case's results.
type row struct {
	c    corpusCase
	ours bool    // approvals.Evaluate allows it
	bot  outcome // the bot's session
	cli  outcome // the CLI's own rules
}

const (
	parallel  = 4  // CLI processes at once
	chunkSize = 25 // commands per CLI process
)

func TestCompareEnginesSmall(t *testing.T) {
	rows := compare(t, smallCases)
	for _, r := range rows {
		if r.ours != (r.c.Want == "allow") {
			t.Errorf("ours on %q under %q: allow = %v, want %s", r.c.Cmd, r.c.AllRules(), r.ours, r.c.Want)
		}
	}
	// What the pinned CLI does with these, as measured: the decision to
	// keep our own matching for allow rules rests on it.
	byCmd := map[string]row{}
	for _, r := range rows {
		byCmd[r.c.Cmd] = r
	}
	if r := byCmd["git status -s"]; !r.cli.unasked() || !r.bot.ran || len(r.bot.unnamed)+len(r.cli.unnamed) > 0 {
		t.Errorf("git status -s: the rule's own command must run, nothing else: %s", r)
	}
	if r := byCmd["git status && ls"]; !r.cli.unasked() || !r.bot.unasked() {
		t.Errorf("git status && ls: the CLI runs ls, which it deems read-only, unasked with or without the rule: %s", r)
	}
	if r := byCmd["command touch x"]; !r.cli.unasked() || len(r.cli.unnamed) == 0 || r.bot.ran {
		t.Errorf("command touch x: the CLI's own matching of command:* ran touch unasked, ours asked; if that changed, rerun the whole comparison: %s", r)
	}
	for _, r := range rows {
		if r.c.Want == "prompt" && r.bot.ran && r.bot.asked {
			t.Errorf("%q: the bot allowed a command no rule covers: %s", r.c.Cmd, r)
		}
	}
	t.Log("\n" + table(rows))
	t.Log(summary(rows))
}

// TestCompareEnginesCorpus runs the whole corpus (CLAUDEOPS_PERMCOMPARE=1).
func TestCompareEnginesCorpus(t *testing.T) {
	if os.Getenv("CLAUDEOPS_PERMCOMPARE") != "1" {
		t.Skip("set CLAUDEOPS_PERMCOMPARE=1 to run the whole corpus through the real CLI")
	}
	rows := compare(t, loadCorpus(t))
	for _, r := range rows {
		if r.ours && r.c.Want == "prompt" {
			t.Errorf("ours allows %q under %q, which a person did not approve (%s)", r.c.Cmd, r.c.AllRules(), r.c.Why)
		}
	}
	out := "# Bash allow rules: the CLI's engine and ours on the same corpus\n\n" + summary(rows) + "\n" + table(rows)
	if name := os.Getenv("CLAUDEOPS_PERMCOMPARE_OUT"); name != "" {
		if err := os.WriteFile(name, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Log(summary(rows))
}

// compare runs each case under both engines and checks the oracle on the
// way: every command our rules allowed ran nothing they do not name, and
// the trace catches a command that does.
func compare(t *testing.T, cases []corpusCase) []row {
	rows := make([]row, len(cases))
	for i, c := range cases {
		rows[i] = row{c: c, ours: oursAllows(c.AllRules(), c.Cmd)}
	}
	type job struct {
		name  string
		eng   engine
		rules []string
		idx   []int
	}
	var jobs []job
	// The CLI's engine: one process per rule set (and chunk).
	var keys []string
	byKey := map[string][]int{}
	for i, c := range cases {
		if _, ok := byKey[key(c)]; !ok {
			keys = append(keys, key(c))
		}
		byKey[key(c)] = append(byKey[key(c)], i)
	}
	for _, k := range keys {
		for n, idx := range chunk(byKey[k], chunkSize) {
			jobs = append(jobs, job{fmt.Sprintf("cli-%s-%d", safeName(k), n), engineCLI, cases[idx[0]].AllRules(), idx})
		}
	}
	// The bot: rules are ours to apply, any process will do.
	all := make([]int, len(cases))
	for i := range all {
		all[i] = i
	}
	for n, idx := range chunk(all, chunkSize) {
		jobs = append(jobs, job{fmt.Sprintf("ours-%d", n), engineOurs, nil, idx})
	}

	var mu sync.Mutex
	sem := make(chan struct{}, parallel)
	t.Run("runs", func(t *testing.T) {
		for n, j := range jobs {
			t.Run(j.name, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				s := newSession(t, j.eng, j.rules)
				for _, i := range j.idx {
					c := cases[i]
					var o outcome
					if j.eng == engineCLI {
						o = s.run(c.Cmd, func(json.RawMessage) bool { return false })
					} else {
						s.rules = c.AllRules()
						o = s.run(c.Cmd, func(in json.RawMessage) bool { return oursAllowsInput(c.AllRules(), in, s.work) })
					}
					if o.err != "" {
						t.Errorf("%s %q: %s", j.eng, c.Cmd, o.err)
					}
					mu.Lock()
					if j.eng == engineCLI {
						rows[i].cli = o
					} else {
						rows[i].bot = o
					}
					mu.Unlock()
				}
				if n == len(jobs)-1 {
					// The oracle's self-check: a person allowing what the
					// rule does not name is seen.
					s.rules = []string{"git status:*"}
					o := s.run("git status; touch pwned", func(json.RawMessage) bool { return true })
					if !o.ran || len(o.unnamed) == 0 {
						t.Errorf("the trace missed touch pwned run beside git status: %+v", o)
					}
				}
			})
		}
	})
	for _, r := range rows {
		if r.bot.allowed && r.bot.checkable && len(r.bot.unnamed) > 0 {
			t.Errorf("ours allowed %q under %q and it ran what they do not name: %q", r.c.Cmd, r.c.AllRules(), r.bot.unnamed)
		}
	}
	return rows
}

func oursAllows(rules []string, cmd string) bool {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return oursAllowsInput(rules, in, "/nonexistent/work")
}

// oursAllowsInput is the bot's decision: the rules as global allow rules.
func oursAllowsInput(rules []string, input json.RawMessage, cwd string) bool {
	var rs []approvals.Rule
	for _, r := range rules {
		rs = append(rs, approvals.Rule{Scope: approvals.ScopeGlobal, Effect: approvals.EffectAllow, Tool: approvals.ToolBash, Pattern: r})
	}
	eff, _ := approvals.Evaluate(rs, "C", "T", approvals.ToolBash, input, cwd)
	return eff == approvals.EffectAllow
}

func chunk(idx []int, n int) [][]int {
	var out [][]int
	for len(idx) > n {
		out = append(out, idx[:n])
		idx = idx[n:]
	}
	return append(out, idx)
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

func (r row) String() string {
	return fmt.Sprintf("ours=%v bot=%+v cli=%+v", r.ours, r.bot, r.cli)
}

// let says whether a run let a command through and how.
func let(o outcome) string {
	switch {
	case o.err != "":
		return "error"
	case o.unasked():
		return "ran unasked"
	case o.ran:
		return "ran, allowed"
	case o.cliDenied:
		return "CLI denied"
	case o.asked:
		return "asked"
	}
	return "did not run"
}

func unnamedCell(o outcome) string {
	switch {
	case !o.ran:
		return ""
	case !o.checkable:
		return "n/a"
	case len(o.unnamed) == 0:
		return "no"
	}
	return "yes: " + strings.Join(o.unnamed, "; ")
}

func table(rows []row) string {
	var b strings.Builder
	b.WriteString("| # | rule | command | want | ours | bot run | CLI rules: run | CLI ran unnamed |\n|---|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		ours := "prompt"
		if r.ours {
			ours = "allow"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", i+1, cell(strings.Join(r.c.AllRules(), ", ")), cell(r.c.Cmd), r.c.Want, ours,
			let(r.bot), let(r.cli), cell(unnamedCell(r.cli)))
	}
	return b.String()
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string {
	if s == "" {
		return ""
	}
	q := fmt.Sprintf("%q", s)
	q = q[1 : len(q)-1]
	q = strings.ReplaceAll(q, "|", `\|`)
	return "`` " + strings.ReplaceAll(q, "`", "'") + " ``"
}

// summary gives the figures: of the commands a person did not approve
// (want "prompt"), how many each engine let run, and why.
func summary(rows []row) string {
	var n, prompt, allow int
	var cliLet, cliLetRule, cliUnnamed, botLet, botLetRule, botLetCLI, botUnnamed, cliAllowRan, botAllowRan, errs int
	var cliLetCmds []string
	for _, r := range rows {
		n++
		if r.cli.err != "" || r.bot.err != "" {
			errs++
		}
		if r.c.Want == "allow" {
			allow++
			if r.cli.ran {
				cliAllowRan++
			}
			if r.bot.ran {
				botAllowRan++
			}
			continue
		}
		prompt++
		if r.cli.ran {
			cliLet++
			if !r.bot.unasked() { // the CLI would not have run it without the rule
				cliLetRule++
				cliLetCmds = append(cliLetCmds, r.c.Cmd)
			}
			if len(r.cli.unnamed) > 0 {
				cliUnnamed++
			}
		}
		if r.bot.ran {
			botLet++
			if r.bot.asked {
				botLetRule++
			} else {
				botLetCLI++
			}
			if len(r.bot.unnamed) > 0 {
				botUnnamed++
			}
		}
	}
	slices.Sort(cliLetCmds)
	var b strings.Builder
	fmt.Fprintf(&b, "%d cases: %d a person approved (want allow), %d not (want prompt); %d runs failed.\n", n, allow, prompt, errs)
	fmt.Fprintf(&b, "Not approved, yet run: CLI's engine %d (%d only because of the rule, %d ran what no rule names); ours %d (%d by our rules, %d by the CLI's read-only judgement without any rule; %d ran what no rule names).\n",
		cliLet, cliLetRule, cliUnnamed, botLet, botLetRule, botLetCLI, botUnnamed)
	fmt.Fprintf(&b, "Approved and run without a person being asked: CLI's engine %d of %d, ours %d of %d.\n", cliAllowRan, allow, botAllowRan, allow)
	if len(cliLetCmds) > 0 {
		fmt.Fprintf(&b, "Let through by the CLI's rule matching only: %q\n", cliLetCmds)
	}
	return b.String()
}
