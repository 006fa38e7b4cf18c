package runnerimage

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/settings"
)

// TestImage: a channel's image reaches its sessions' launch and no other
// channel's; a runner without images ignores it, and status says which.
func TestImage(t *testing.T) {
	r := settings.New(settings.Layer{}, []string{"root"})
	a := settings.Where{Platform: "slack", Channel: "CA"}
	r.SetChat(a, settings.Scope{Level: settings.LevelChannel, Key: a.ChannelKey()}, settings.Image, "runner:infra", "root", time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	const from = "channel slack/CA, set in chat by root on 2026-11-29 12:00 UTC"
	for _, tt := range []struct {
		name    string
		cfg     Config
		channel string
		image   string
		status  []string
	}{
		{name: "docker, A", cfg: Config{Runner: "docker", Images: true}, channel: "CA", image: "runner:infra",
			status: []string{"Image of this channel's sessions: `runner:infra` (" + from + ")."}},
		{name: "docker, B", cfg: Config{Runner: "docker", Images: true}, channel: "CB"},
		{name: "sandbox, A", cfg: Config{Runner: "sandbox"}, channel: "CA",
			status: []string{"Image: `runner:infra` (" + from + ") is not used: the sandbox runner has no image."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ft := threadtest.New("t", "alice")
			ft.Key = adapters.ThreadRef{Platform: "slack", Channel: tt.channel, Thread: "1.2"}
			ft.Resolver = r
			p := New(tt.cfg).Attach(ft).(*part)
			var l thread.Launch
			p.BeforeLaunch(context.Background(), &l)
			if l.Image != tt.image {
				t.Errorf("launch image %q, want %q", l.Image, tt.image)
			}
			var s thread.Status
			p.Status(context.Background(), &s)
			if !slices.Equal(s.Tail, tt.status) {
				t.Errorf("status %q, want %q", s.Tail, tt.status)
			}
		})
	}
}

// TestCheckImage: chat may set an image only where the runner has one.
func TestCheckImage(t *testing.T) {
	if err := New(Config{Runner: "docker", Images: true}).CheckImage("x:1"); err != nil {
		t.Error(err)
	}
	if err := New(Config{Runner: "local"}).CheckImage("x:1"); err == nil || err.Error() != "the local runner has no image: sessions here run on the bot's host" {
		t.Errorf("local: %v", err)
	}
}
