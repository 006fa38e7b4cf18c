package claudeproc

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestBuildEnv(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin", "HOME=/home/bot", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TZ=UTC",
		"ANTHROPIC_API_KEY=sk-1", "ANTHROPIC_BASE_URL=http://x", "CLAUDE_CODE_USE_BEDROCK=1",
		"DISABLE_TELEMETRY=1", "HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost",
		"SLACK_BOT_TOKEN=xoxb-1", "SLACK_APP_TOKEN=xapp-1", "SLACK_SIGNING_SECRET=s",
		"MATRIX_ACCESS_TOKEN=syt", "MATRIX_PASSWORD=pw", "CLAUDEOPS_DB=/data/db",
		"AWS_SECRET_ACCESS_KEY=aws", "AWS_REGION=eu-west-1", "GITHUB_TOKEN=ghp", "RANDOM=1", "=weird", "NOEQUALS",
	}
	tests := []struct {
		name  string
		extra []string
		want  []string
	}{
		{"allowlist only", nil, []string{
			"PATH=/usr/bin", "HOME=/home/bot", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TZ=UTC",
			"ANTHROPIC_API_KEY=sk-1", "ANTHROPIC_BASE_URL=http://x", "CLAUDE_CODE_USE_BEDROCK=1",
			"DISABLE_TELEMETRY=1", "HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost",
		}},
		{"named extras and prefixes, secrets still refused", []string{"GITHUB_TOKEN", "AWS_*", "SLACK_BOT_TOKEN", "MATRIX_*", "*"}, []string{
			"PATH=/usr/bin", "HOME=/home/bot", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TZ=UTC",
			"ANTHROPIC_API_KEY=sk-1", "ANTHROPIC_BASE_URL=http://x", "CLAUDE_CODE_USE_BEDROCK=1",
			"DISABLE_TELEMETRY=1", "HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost",
			"AWS_SECRET_ACCESS_KEY=aws", "AWS_REGION=eu-west-1", "GITHUB_TOKEN=ghp",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BuildEnv(parent, tt.extra); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	base := "-p --output-format stream-json --input-format stream-json --verbose --permission-prompt-tool stdio --include-partial-messages"
	// The guard's launch flags between the mode and --settings (the empty
	// setting source shows as two spaces).
	guard := " --restricted --setting-sources  --tools Agent,AskUserQuestion,Bash,Edit,EnterPlanMode,ExitPlanMode,Glob,Grep,KillBash,KillShell,Monitor,NotebookEdit,Read,Task,TaskCreate,TaskGet,TaskList,TaskStop,TaskUpdate,TodoWrite,ToolSearch,WebFetch,WebSearch,Write --strict-mcp-config"
	tests := []struct {
		opts Options
		want string
	}{
		{Options{}, base},
		{Options{Resume: "abc", ForkSession: true, Model: "claude-sonnet-4-5", PermissionMode: "plan"},
			base + " --resume abc --fork-session --model claude-sonnet-4-5 --permission-mode plan"},
		{Options{ForkSession: true, SessionID: "u-1"}, base + " --session-id u-1"},
		{Options{AppendSystemPrompt: "facts:\n1. a b; $(rm -rf /)", FreshSystemPrompt: true}, base + " --append-system-prompt facts:\n1. a b; $(rm -rf /) --system-prompt-snapshot off"},
		{Options{Guard: &Guard{}}, base + ` --permission-mode default` + guard + ` --settings {"disableAutoMode":"disable","disableBundledSkills":true,"disableSkillShellExecution":true,"env":{"CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD":"1"},"permissions":{"deny":[],"disableBypassPermissionsMode":"disable"},"useAutoModeDuringPlan":false}`},
		{Options{Guard: &Guard{DenyRules: []string{"Bash(rm:*)", "Edit(//srv/**)"}}, PermissionMode: "plan"}, base + ` --permission-mode plan` + guard + ` --settings {"disableAutoMode":"disable","disableBundledSkills":true,"disableSkillShellExecution":true,"env":{"CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD":"1"},"permissions":{"deny":["Bash(rm:*)","Edit(//srv/**)"],"disableBypassPermissionsMode":"disable"},"useAutoModeDuringPlan":false}`},
		{Options{Guard: &Guard{}, Dir: "/srv/wt"}, base + ` --permission-mode default` + guard + ` --settings {"disableAutoMode":"disable","disableBundledSkills":true,"disableSkillShellExecution":true,"env":{"CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD":"1"},"permissions":{"deny":[],"disableBypassPermissionsMode":"disable"},"useAutoModeDuringPlan":false} --add-dir /srv/wt`},
		{Options{Guard: &Guard{AskRules: []string{"Bash"}}}, base + ` --permission-mode default` + guard + ` --settings {"disableAutoMode":"disable","disableBundledSkills":true,"disableSkillShellExecution":true,"env":{"CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD":"1"},"permissions":{"ask":["Bash"],"deny":[],"disableBypassPermissionsMode":"disable"},"useAutoModeDuringPlan":false}`},
		{Options{AppendSystemPrompt: "be brief", AllowedTools: []string{"Read", "Bash(git:*)"}, DisallowedTools: []string{"WebFetch"}, MaxTurns: 5, ExtraArgs: []string{"--add-dir", "/srv"}},
			base + " --append-system-prompt be brief --allowedTools Read Bash(git:*) --disallowedTools WebFetch --max-turns 5 --add-dir /srv"},
	}
	for _, tt := range tests {
		if got := strings.Join(tt.opts.Args(), " "); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func TestGuardRefusesModesThatDecideAlone(t *testing.T) {
	for _, mode := range []string{"acceptEdits", "auto", "bypassPermissions", "dontAsk", "manual", "yolo"} {
		_, err := Start(context.Background(), Options{Bin: "/nonexistent", Guard: &Guard{}, PermissionMode: mode})
		if err == nil || !strings.Contains(err.Error(), "guarded session runs in default or plan") {
			t.Errorf("mode %s: %v", mode, err)
		}
		// A live guarded process refuses the switch before writing anything.
		p := &Process{opts: Options{Guard: &Guard{}}}
		if _, err := p.SetPermissionMode(context.Background(), mode); err == nil || !strings.Contains(err.Error(), "guarded session runs in default or plan") {
			t.Errorf("switch to %s: %v", mode, err)
		}
	}
}

// TestAppendSystemPromptIsOneArgument: text with spaces, newlines and shell
// syntax reaches the CLI as one argv element, right after its flag.
func TestAppendSystemPromptIsOneArgument(t *testing.T) {
	text := "Facts:\n1. it's \"x\"; $(rm -rf /) `id` --model opus"
	args := (&Options{AppendSystemPrompt: text, FreshSystemPrompt: true}).Args()
	i := slices.Index(args, "--append-system-prompt")
	if i < 0 || i+1 >= len(args) || args[i+1] != text {
		t.Fatalf("args %q do not carry the text as one element", args)
	}
	if slices.Contains(args, "--model") {
		t.Errorf("text inside the prompt became a flag: %q", args)
	}
}
