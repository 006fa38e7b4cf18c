package bot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/workspace"
)

// TestRepositoryInstructionsReachClaude: a channel bound to a repository
// whose CLAUDE.md and rule carry markers, and whose settings carry a hook:
// a question in the channel reaches the model with both markers in its
// first user message, as on a laptop, and the hook never runs (its marker
// file is absent).
func TestRepositoryInstructionsReachClaude(t *testing.T) {
	marks := t.TempDir()
	hookMark := filepath.Join(marks, "hook-ran")
	bare := bareRemoteWith(t, map[string]string{
		"CLAUDE.md":             "Answer in haiku. MARK_REPO_CLAUDE_MD\n",
		".claude/rules/go.md":   "Wrap errors. MARK_REPO_RULE\n",
		".claude/settings.json": `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ` + hookMark + `"}]}]}}`,
	})
	m, err := workspace.New(workspace.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, script(nil), func(c *testConfig) {
		c.Workspace.Manager = m
		c.Workspace.Repos = []string{"console/console=" + bare}
	})
	h.say("which conventions apply?")
	h.expect(`ok: .*which conventions apply\?`)
	reqs := h.api.Requests()
	if len(reqs) == 0 || len(reqs[0].Messages) == 0 || len(reqs[0].Messages[0].Content) == 0 {
		t.Fatalf("no request with a user message reached the model: %d requests", len(reqs))
	}
	first := reqs[0].Messages[0].Content[0].Text
	for _, want := range []string{"MARK_REPO_CLAUDE_MD", "MARK_REPO_RULE"} {
		if !strings.Contains(first, want) {
			t.Errorf("%s is not in the first user message's first block:\n%s", want, first)
		}
	}
	if _, err := os.Stat(hookMark); err == nil {
		t.Errorf("the repository's SessionStart hook ran")
	}
}

// bareRemoteWith is bareRemote with files (path: content) committed too.
func bareRemoteWith(t *testing.T, files map[string]string) string {
	t.Helper()
	bare := bareRemote(t)
	seed := filepath.Join(t.TempDir(), "seed")
	gitRun(t, filepath.Dir(seed), "clone", "-q", bare, seed)
	for name, body := range files {
		p := filepath.Join(seed, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, seed, "add", "-A")
	gitRun(t, seed, "commit", "-q", "-m", "instructions")
	gitRun(t, seed, "push", "-q", "origin", "main")
	return bare
}

// TestRepositoryCommandReachesClaude: a person types a custom slash command
// of the channel's repository (.claude/commands/review.md, which the
// guarded CLI does not load), then a skill of it as a command: the model is sent the command as the CLI
// names it and its text with the arguments; its allowed-tools and
// !`command` line take no effect (no marker file); a name neither the CLI
// nor the repository has is still said and sent nowhere.
func TestRepositoryCommandReachesClaude(t *testing.T) {
	bangMark := filepath.Join(t.TempDir(), "bang-ran")
	bare := bareRemoteWith(t, map[string]string{
		".claude/commands/review.md":   "---\ndescription: Review\nallowed-tools: Bash\n---\n!`touch " + bangMark + "`\nReview the change. MARK_REPO_CMD $ARGUMENTS\n",
		".claude/skills/lint/SKILL.md": "---\nname: lint\ndescription: Lint\n---\nLint it. MARK_REPO_SKILL $ARGUMENTS\n",
	})
	m, err := workspace.New(workspace.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, script(nil), func(c *testConfig) {
		c.Workspace.Manager = m
		c.Workspace.Repos = []string{"console/console=" + bare}
	})
	h.say("/review the parser")
	h.expect(`ok: .*Review the change\. MARK_REPO_CMD the parser`)
	log := ""
	for _, r := range h.api.Requests() {
		log += string(r.Body)
	}
	if !strings.Contains(log, `<command-name>/review</command-name>`) {
		t.Errorf("the model was not sent the command's name as the CLI sends it")
	}
	if _, err := os.Stat(bangMark); err == nil {
		t.Errorf("the command's !`touch` line ran")
	}
	h.expect(`— ✓`)
	h.say("/lint src")
	h.expect(`ok: .*Lint it\. MARK_REPO_SKILL src`)
	h.expect(`— ✓`)
	h.say("/nosuch x")
	h.expect("`/nosuch` is not a command of Claude Code here; nothing was sent")
}

// TestRepositorySkillCalledByClaude: the channel's repository has a skill;
// the model sees it listed (repo:lint), calls it with the Skill tool and
// gets its body, nobody is asked and the turn ends; the skill's
// allowed-tools take no effect: the model's next Bash call is put before a
// person, and denied, writes nothing. Typed, /lint still reaches the
// model as the bot expands it.
func TestRepositorySkillCalledByClaude(t *testing.T) {
	marks := t.TempDir()
	pwned := filepath.Join(marks, "pwned")
	bare := bareRemoteWith(t, map[string]string{
		".claude/skills/lint/SKILL.md": "---\nname: lint\ndescription: Lints MARK_SKILL_DESC\nallowed-tools: Bash\n---\nLint it. MARK_REPO_SKILL $ARGUMENTS\n",
	})
	m, err := workspace.New(workspace.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	base := script(nil)
	h := newHarness(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if !strings.Contains(req.LastUserText(), "use the skill") && len(req.ToolResults()) == 0 || req.IsProbe() {
			return base(ctx, req)
		}
		switch n := len(req.ToolResults()); {
		case n == 0 && !strings.Contains(string(req.Body), "Launching skill"):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Skill", map[string]string{"skill": "repo:lint", "args": "src"})}}
		case strings.Contains(string(req.Body), "MARK_REPO_SKILL src") && !strings.Contains(string(req.Body), "touch "+pwned):
			return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash", map[string]string{"command": "touch " + pwned, "description": "x"})}}
		}
		return fakeanthropic.TextReply("skill done")
	}, func(c *testConfig) {
		c.Workspace.Manager = m
		c.Workspace.Repos = []string{"console/console=" + bare}
		c.SkillsBase = t.TempDir()
	})
	h.say("use the skill")
	h.expect(`\? approval \w+: Bash wants to run`)
	h.say("deny")
	h.expect(`skill done`)
	h.expect(`— ✓`)
	var sent string
	for _, r := range h.api.Requests() {
		sent += string(r.Body)
	}
	if !strings.Contains(sent, "MARK_SKILL_DESC") || !strings.Contains(sent, "repo:lint") {
		t.Errorf("the skill was not listed to the model")
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("the Bash call after the skill ran")
	}
	h.say("/lint src")
	h.expect(`ok: .*Lint it\. MARK_REPO_SKILL src`)
	h.expect(`— ✓`)
}
