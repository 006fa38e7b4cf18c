//go:build !nodocker

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/claudeops/claudeops/claudeproc/docker"
	"github.com/claudeops/claudeops/internal/fakeanthropic"
)

// TestDockerRunnerConfig: the CLAUDEOPS_RUNNER_* settings of the docker
// runner, their defaults, and the complaints naming the variable at fault.
func TestDockerRunnerConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		wantErr []string // each must be in the error
		check   func(t *testing.T, c docker.Config)
	}{
		{"defaults", []string{"CLAUDEOPS_RUNNER_IMAGE=claude:1"}, nil, func(t *testing.T, c docker.Config) {
			if c.Image != "claude:1" || c.Network != "bridge" || c.Memory != 2<<30 || c.CPUs != 2 || c.Pids != 512 || c.User != "" {
				t.Errorf("config = %+v", c)
			}
		}},
		{"all set", []string{"CLAUDEOPS_RUNNER_IMAGE=claude:1", "CLAUDEOPS_RUNNER_NETWORK=none", "CLAUDEOPS_RUNNER_MEMORY=512m",
			"CLAUDEOPS_RUNNER_CPUS=1.5", "CLAUDEOPS_RUNNER_PIDS=100", "CLAUDEOPS_RUNNER_USER=1000:1000"}, nil, func(t *testing.T, c docker.Config) {
			if c.Network != "none" || c.Memory != 512<<20 || c.CPUs != 1.5 || c.Pids != 100 || c.User != "1000:1000" {
				t.Errorf("config = %+v", c)
			}
		}},
		{"no image", nil, []string{"CLAUDEOPS_RUNNER_IMAGE is required"}, nil},
		{"bad values, all told", []string{"CLAUDEOPS_RUNNER_IMAGE=claude:1", "CLAUDEOPS_RUNNER_MEMORY=lots",
			"CLAUDEOPS_RUNNER_NETWORK=container:claudeops", "CLAUDEOPS_RUNNER_USER=root", "CLAUDEOPS_RUNNER_PIDS=1"},
			[]string{"CLAUDEOPS_RUNNER_MEMORY", "CLAUDEOPS_RUNNER_NETWORK", "CLAUDEOPS_RUNNER_USER", "CLAUDEOPS_RUNNER_PIDS"}, nil},
		{"unknown runner", []string{"CLAUDEOPS_RUNNER=dokker"}, []string{"local, sandbox, docker or kubernetes"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"CLAUDEOPS_RUNNER=docker", "CLAUDEOPS_STATE_DIR=" + t.TempDir()}, tt.env...)
			c, err := loadConfig(env)
			if len(tt.wantErr) > 0 {
				for _, w := range tt.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v, want it to say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dc, bad := c.Runner.Docker.Config(instanceName(c.StateDir))
			if len(bad) > 0 {
				t.Fatal(bad)
			}
			tt.check(t, dc)
		})
	}
	// Two bots on one engine never share containers' labels or volumes.
	d := docker.Settings{Image: "i", Memory: "1g", CPUs: 1, Pids: 64, Network: "bridge"}
	a, _ := d.Config(instanceName("/srv/bot-a/state"))
	a2, _ := d.Config(instanceName("/srv/bot-a/state"))
	b, _ := d.Config(instanceName("/srv/bot-b/state"))
	if a.Instance != a2.Instance || a.Instance == b.Instance {
		t.Errorf("instances: %q %q %q", a.Instance, a2.Instance, b.Instance)
	}
}

// TestDockerRunnerHidesTheBot runs the bot as operators do (secret from a
// file, state in its directory) with CLAUDEOPS_RUNNER=docker and has Claude
// look for them from its container: it finds neither the bot's process,
// nor its state, nor the secret file, and still writes in its working
// directory. When the bot has ended, none of its containers is left.
// TestSandboxRunnerHidesTheBot is the control: with the local runner the
// same commands find them all.
func TestDockerRunnerHidesTheBot(t *testing.T) {
	image := os.Getenv("CLAUDEOPS_TEST_DOCKER_IMAGE")
	if image == "" {
		why := "CLAUDEOPS_TEST_DOCKER_IMAGE is not set: scripts/test builds the image with scripts/docker-engine wherever a Docker engine can run"
		if os.Getenv("CLAUDEOPS_REQUIRE_DOCKER") == "1" {
			t.Fatal(why)
		}
		if r := os.Getenv("CLAUDEOPS_DOCKER_UNAVAILABLE"); r != "" {
			why += " (" + r + ")"
		}
		t.Skip(why)
	}
	api := fakeanthropic.Start(t, func(ctx context.Context, req *fakeanthropic.Request) fakeanthropic.Reply {
		if trs := req.ToolResults(); len(trs) > 0 {
			return fakeanthropic.TextReply("tool said: " + strings.Join(strings.Fields(trs[0].Content), " "))
		}
		return fakeanthropic.Reply{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("Bash",
			map[string]string{"command": req.LastUserText(), "description": "look around"})}}
	})
	base := t.TempDir()
	state, secret, work := filepath.Join(base, "state"), filepath.Join(base, "slack-token"), filepath.Join(base, "work")
	const token = "xoxb-docker-test-token"
	if err := os.WriteFile(secret, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	b := startBotProc(t, []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"CLAUDEOPS_STATE_DIR=" + state, "SLACK_BOT_TOKEN_FILE=" + secret,
		"CLAUDEOPS_WORKDIR=" + work, "CLAUDEOPS_RUNNER=docker", "CLAUDEOPS_RUNNER_IMAGE=" + image,
		// The CLI in the image; the fake API is on the host's loopback.
		"CLAUDEOPS_CLAUDE_BIN=claude", "CLAUDEOPS_RUNNER_NETWORK=host",
	})
	pid := strconv.Itoa(b.cmd.Process.Pid)
	b.say("test -e /proc/" + pid + " && echo bot-visible; ls -A " + state + " | sed s/^/entry:/; head -c 15 " + state +
		"/claudeops.db; echo; cat " + secret + "; env | grep -c -e SLACK_ -e CLAUDEOPS_ | sed s/^/botvars:/; touch made.txt")
	var out string
	for out == "" {
		m := b.expect(`^\[main\] (\? approval (\w+): Bash.*|claude: tool said: (.*))$`)
		if m[2] != "" {
			b.say("allow")
			continue
		}
		out = m[3]
	}
	if !strings.Contains(out, "botvars:0") {
		t.Errorf("the tool did not run as expected, or saw the bot's variables: %s", out)
	}
	for what, got := range map[string]bool{
		"the bot's process": strings.Contains(out, "bot-visible"),
		"the state listing": strings.Contains(out, "entry:"),
		"the database":      strings.Contains(out, "SQLite format 3"),
		"the secret's file": strings.Contains(out, token),
	} {
		if got {
			t.Errorf("the container reached %s; the tool printed: %s", what, out)
		}
	}
	if !exists(filepath.Join(work, "made.txt")) {
		t.Errorf("the container did not write in the working directory; the tool printed: %s", out)
	}
	b.stdin.Close()
	<-b.done

	dc, _ := docker.Settings{Image: image, Memory: "1g", CPUs: 1, Pids: 64}.Config(instanceName(absPath(state)))
	r, err := docker.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := make(client.Filters).Add("label", docker.LabelInstance+"="+dc.Instance)
	left, err := r.Client().ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 {
		t.Errorf("the bot left %d containers behind", len(left.Items))
	}
	vols, err := r.Client().VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(vols.Items) != 1 {
		t.Errorf("volumes of the bot: %d, want the one channel's", len(vols.Items))
	}
	for _, v := range vols.Items {
		if _, err := r.Client().VolumeRemove(ctx, v.Name, client.VolumeRemoveOptions{}); err != nil {
			t.Errorf("remove volume %s: %v", v.Name, err)
		}
	}
}
