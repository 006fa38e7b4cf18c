package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
	"github.com/claudeops/claudeops/internal/testcli"
)

// TestSandboxRunnerConfig: what the sandbox hides and where its homes go,
// from the environment.
func TestSandboxRunnerConfig(t *testing.T) {
	state, dbDir, work := t.TempDir(), t.TempDir(), t.TempDir()
	token := filepath.Join(t.TempDir(), "slack-token")
	if err := os.WriteFile(token, []byte("xoxb-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	userHome, _ := os.UserHomeDir()
	tests := []struct {
		name      string
		env       []string
		homes     string
		hides     []string // among others
		notHidden []string
	}{
		{"state directory", []string{"CLAUDEOPS_STATE_DIR=" + state},
			state + "/sandbox-homes", []string{state, filepath.Join(userHome, ".claude"), filepath.Join(userHome, ".claude.json")}, nil},
		{"database alone: its files", []string{"CLAUDEOPS_DB=" + dbDir + "/bot.db"},
			dbDir + "/bot.sandbox-homes",
			[]string{dbDir + "/bot.db", dbDir + "/bot.db-wal", dbDir + "/bot.matrix-crypto.db", dbDir + "/bot.matrix-recovery-key"},
			[]string{dbDir}},
		{"secret files and more", []string{"CLAUDEOPS_STATE_DIR=" + state, "SLACK_BOT_TOKEN_FILE=" + token,
			"CLAUDEOPS_SANDBOX_HIDE=/etc/claudeops.env,/root/.ssh", "CLAUDEOPS_SANDBOX_HOMES=" + dbDir + "/homes"},
			dbDir + "/homes", []string{state, token, "/etc/claudeops.env", "/root/.ssh"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(append(tt.env, "CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_WORKDIR="+work))
			if err != nil {
				t.Fatal(err)
			}
			sb := sandbox(c)
			if sb.HomeBase != tt.homes || sb.Bwrap != "bwrap" {
				t.Errorf("homes %s, bwrap %q; want %s", sb.HomeBase, sb.Bwrap, tt.homes)
			}
			for _, p := range tt.hides {
				if !slices.Contains(sb.Hide, p) {
					t.Errorf("%s is not hidden: %v", p, sb.Hide)
				}
			}
			for _, p := range tt.notHidden {
				if slices.Contains(sb.Hide, p) {
					t.Errorf("%s is hidden: %v", p, sb.Hide)
				}
			}
		})
	}
	if _, err := loadConfig([]string{"CLAUDEOPS_RUNNER=kubernets", "CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_WORKDIR=" + work}); err == nil ||
		!strings.Contains(err.Error(), "CLAUDEOPS_RUNNER must be") {
		t.Errorf("an unknown runner: %v", err)
	}
}

// TestSandboxRunnerRefusedAtStart: a sandbox that cannot hold the sessions
// stops the bot before it takes a message: no bwrap, or a working
// directory it must hide. The control builds.
func TestSandboxRunnerRefusedAtStart(t *testing.T) {
	testcli.Bwrap(t)
	state, secrets, work := t.TempDir(), t.TempDir(), t.TempDir()
	tests := []struct {
		name    string
		env     []string
		wantErr string
	}{
		{"control", nil, ""},
		{"no bwrap", []string{"CLAUDEOPS_SANDBOX_BWRAP=" + filepath.Join(work, "none")}, "find bubblewrap"},
		{"working directory hidden", []string{"CLAUDEOPS_SANDBOX_HIDE=" + secrets, "CLAUDEOPS_WORKDIR=" + secrets + "/repo"}, "inside " + secrets},
		{"working directory among the homes", []string{"CLAUDEOPS_SANDBOX_HOMES=" + secrets, "CLAUDEOPS_WORKDIR=" + secrets + "/repo"}, "inside " + secrets},
	}
	if err := os.Mkdir(secrets+"/repo", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_STATE_DIR=" + state, "CLAUDEOPS_WORKDIR=" + work}, tt.env...)
			c, err := loadConfig(env)
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := buildRunner(t.Context(), c, slog.New(slog.DiscardHandler))
			if tt.wantErr == "" {
				if _, ok := r.(claudeproc.Sandbox); err != nil || !ok {
					t.Fatalf("control: %T %v", r, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to say %q", err, tt.wantErr)
			}
		})
	}
}

// TestSandboxRunnerHidesTheBot runs the bot as operators do (secrets from
// a file, state in its directory) and has Claude look for them: under
// CLAUDEOPS_RUNNER=sandbox it finds neither the bot's process, nor its
// state, nor the secret file, and still writes in its working directory.
// The control, CLAUDEOPS_RUNNER=local, finds them all.
func TestSandboxRunnerHidesTheBot(t *testing.T) {
	bin := testcli.Bin(t)
	testcli.Bwrap(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.TextReply("tool said: " + strings.Join(strings.Fields(trs[0].Content), " "))
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash",
			map[string]string{"command": req.LastUserText(), "description": "look around"})}}
	})
	for _, kind := range []string{"local", "sandbox"} {
		t.Run(kind, func(t *testing.T) {
			// Outside /tmp: the sandbox's /tmp is its own.
			base, err := os.MkdirTemp("/var/tmp", "claudeops-runner-test-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			state, secret := filepath.Join(base, "state"), filepath.Join(base, "slack-token")
			const token = "xoxb-sandbox-test-token"
			if err := os.WriteFile(secret, []byte(token+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			b := startBotProc(t, []string{
				"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
				"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
				"CLAUDEOPS_STATE_DIR=" + state, "SLACK_BOT_TOKEN_FILE=" + secret,
				"CLAUDEOPS_CLAUDE_BIN=" + bin, "CLAUDEOPS_WORKDIR=" + work, "CLAUDEOPS_RUNNER=" + kind,
			})
			pid := strconv.Itoa(b.cmd.Process.Pid)
			b.say("test -e /proc/" + pid + " && echo bot-visible; ls -A " + state + " | sed s/^/entry:/; head -c 15 " + state + "/claudeops.db; echo; cat " + secret + "; touch made.txt")
			var out string
			for out == "" {
				m := b.expect(`^\[main\] (\? approval (\w+): Bash.*|claude: tool said: (.*))$`)
				if m[2] != "" {
					b.say("allow")
					continue
				}
				out = m[3]
			}
			reached := map[string]bool{
				"the bot's process": strings.Contains(out, "bot-visible"),
				// The state directory shows the way to the session's home
				// (sandbox-homes/<thread>), nothing else.
				"the state listing":  strings.Contains(out, "entry:claudeops.db"),
				"the database":       strings.Contains(out, "SQLite format 3"),
				"the secret's file":  strings.Contains(out, token),
				"the working folder": exists(filepath.Join(work, "made.txt")),
			}
			for what, got := range reached {
				if want := kind == "local" || what == "the working folder"; got != want {
					t.Errorf("%s reached %s: %v, want %v; the tool printed: %s", kind, what, got, want, out)
				}
			}
			b.stdin.Close()
			<-b.done
		})
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// sandbox is the sandbox runner c would build.
func sandbox(c config) claudeproc.Sandbox { return c.Runner.Sandbox.Sandbox(c.runnerHost(nil)) }

// TestSandboxRunnerRefusesHiddenCwd: a channel moved (by an admin's `cwd`)
// into a path the sandbox hides gets no session, and is told why; the
// model is never asked.
func TestSandboxRunnerRefusesHiddenCwd(t *testing.T) {
	bin := testcli.Bin(t)
	testcli.Bwrap(t)
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		return fakeanthropic.TextReply("hello")
	})
	hidden := t.TempDir()
	if err := os.Mkdir(filepath.Join(hidden, "repo"), 0o700); err != nil {
		t.Fatal(err)
	}
	b := startBotProc(t, []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDEOPS_STATE_DIR=" + t.TempDir(), "CLAUDEOPS_CLAUDE_BIN=" + bin, "CLAUDEOPS_WORKDIR=" + t.TempDir(),
		"CLAUDEOPS_RUNNER=sandbox", "CLAUDEOPS_SANDBOX_HIDE=" + hidden,
	})
	b.say("cwd " + hidden + "/repo")
	b.expect(regexp.QuoteMeta(hidden + "/repo"))
	b.say("hello")
	b.expect(`Could not start Claude Code: sandbox: refusing working directory .*inside ` + regexp.QuoteMeta(hidden))
	if n := len(api.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	b.stdin.Close()
	<-b.done
}
