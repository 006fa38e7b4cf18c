package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
