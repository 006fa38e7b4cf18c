package docker

import (
	"syscall"
	"testing"

	"github.com/claudeops/claudeops/claudeproc"
)

// Unit tests of the pure parts; engine_test.go runs containers.

func TestCheckConfig(t *testing.T) {
	ok := Config{Image: "img:1", Instance: "bot-1"}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		bad  int
	}{
		{"defaults", func(*Config) {}, 0},
		{"all set", func(c *Config) { c.Network, c.Memory, c.CPUs, c.Pids, c.User = "host", 1<<30, 1.5, 100, "1000:1000" }, 0},
		{"named network", func(c *Config) { c.Network = "claudeops_egress" }, 0},
		{"no image", func(c *Config) { c.Image = "" }, 1},
		{"no instance", func(c *Config) { c.Instance = "" }, 1},
		{"instance with a slash", func(c *Config) { c.Instance = "a/b" }, 1},
		// Joining another container's namespaces, e.g. the bot's own.
		{"container network", func(c *Config) { c.Network = "container:claudeops" }, 1},
		{"user by name", func(c *Config) { c.User = "claude" }, 1},
		{"user without group", func(c *Config) { c.User = "1000" }, 1},
		{"tiny memory", func(c *Config) { c.Memory = 1 << 20 }, 1},
		{"negative cpus and pids", func(c *Config) { c.CPUs, c.Pids = -1, -1 }, 2},
		{"few pids", func(c *Config) { c.Pids = 5 }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			if got := c.Check(); len(got) != tc.bad {
				t.Errorf("Check() = %q, want %d complaints", got, tc.bad)
			}
		})
	}
}

func TestContainerEnv(t *testing.T) {
	in := []string{
		"PATH=/home/bot/bin:/usr/bin", "HOME=/home/bot", "TMPDIR=/home/bot/tmp", "SHELL=/usr/bin/zsh",
		"CLAUDE_CONFIG_DIR=/home/bot/.claude", "PWD=/srv", "ANTHROPIC_API_KEY=sk-1", "LANG=C.UTF-8", "HOMEDIR=x",
	}
	got := ContainerEnv(in)
	want := []string{"ANTHROPIC_API_KEY=sk-1", "LANG=C.UTF-8", "HOMEDIR=x", "HOME=/home/claude", "CLAUDE_CONFIG_DIR=/home/claude/.claude"}
	if len(got) != len(want) {
		t.Fatalf("ContainerEnv = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ContainerEnv = %q, want %q", got, want)
		}
	}
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		code int64
		want claudeproc.ExitStatus
	}{
		{0, claudeproc.ExitStatus{Code: 0}},
		{1, claudeproc.ExitStatus{Code: 1}},
		{128, claudeproc.ExitStatus{Code: 128}},
		{137, claudeproc.ExitStatus{Code: -1, Signal: syscall.SIGKILL}},
		{143, claudeproc.ExitStatus{Code: -1, Signal: syscall.SIGTERM}},
		{255, claudeproc.ExitStatus{Code: 255}},
	} {
		if got := exitStatus(tc.code); got != tc.want {
			t.Errorf("exitStatus(%d) = %+v, want %+v", tc.code, got, tc.want)
		}
	}
}

// TestVolumeNames: a volume per thread (per channel only when no thread is
// given), and per bot.
func TestVolumeNames(t *testing.T) {
	a, _ := New(Config{Image: "i", Instance: "a"})
	b, _ := New(Config{Image: "i", Instance: "b"})
	t1 := claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/1.0"}
	t2 := claudeproc.Session{Channel: "slack/T1/C1", Thread: "slack/T1/C1/2.0"}
	ch := claudeproc.Session{Channel: "slack/T1/C1"}
	if a.VolumeName(t1) != a.VolumeName(t1) || a.VolumeName(t1) == a.VolumeName(t2) || a.VolumeName(ch) == a.VolumeName(t1) {
		t.Errorf("not one volume per thread: %s %s %s", a.VolumeName(t1), a.VolumeName(t2), a.VolumeName(ch))
	}
	if a.VolumeName(t1) == b.VolumeName(t1) {
		t.Errorf("two bots share volume %s", a.VolumeName(t1))
	}
}
