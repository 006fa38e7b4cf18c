package runnerimage

import (
	"context"
	"fmt"

	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
)

// Config says what the bot's runner is.
type Config struct {
	// Runner names the runner in use (CLAUDEOPS_RUNNER's value).
	Runner string
	// Images: the runner runs sessions from an image (docker,
	// kubernetes), which a channel's setting may replace.
	Images bool
}

// Extension gives channels' sessions their image.
type Extension struct{ cfg Config }

// New makes the extension for the runner cfg describes.
func New(cfg Config) *Extension { return &Extension{cfg: cfg} }

// Name implements thread.Extension.
func (*Extension) Name() string { return "runnerimage" }

// Init implements thread.Extension: a part needs only its thread.
func (*Extension) Init(thread.Host) {}

// Attach implements thread.Extension.
func (e *Extension) Attach(t thread.Thread) any { return &part{cfg: e.cfg, t: t} }

type part struct {
	cfg Config
	t   thread.Thread
}

var (
	_ thread.Launcher = (*part)(nil)
	_ thread.Statuser = (*part)(nil)
)

// setting is the channel's image setting ("" where none is given).
func (p *part) setting() settings.Value {
	return p.t.Scopes().Get(thread.Where(p.t.Ref()), settings.Image)
}

// CheckImage refuses an image setting where the runner has no image: for
// settings.Resolver.Check, so that chat cannot set what would not apply.
// Which images the operator's engine or cluster may run is the bot
// admins' to know: only they set it (the schema).
func (e *Extension) CheckImage(string) error {
	if !e.cfg.Images {
		return fmt.Errorf("the %s runner has no image: sessions here run on the bot's host", e.cfg.Runner)
	}
	return nil
}

// BeforeLaunch gives the session the channel's image, where the runner
// has images.
func (p *part) BeforeLaunch(_ context.Context, l *thread.Launch) {
	v := p.setting()
	if v.Text == "" {
		return
	}
	if !p.cfg.Images {
		p.t.Log().Debug("image setting ignored: the runner has no image", "runner", p.cfg.Runner, "image", v.Text, "from", v.Source.String())
		return
	}
	l.Image = v.Text
}

// Status says the channel's image, and where it comes from.
func (p *part) Status(_ context.Context, s *thread.Status) {
	if s.Cost {
		return
	}
	v := p.setting()
	switch {
	case v.Text == "":
	case !p.cfg.Images:
		s.Tail = append(s.Tail, "Image: "+text.CodeSpan(v.Text)+" ("+v.Source.String()+") is not used: the "+p.cfg.Runner+" runner has no image.")
	default:
		// A live session keeps the image it started from.
		s.Tail = append(s.Tail, "Image of this channel's sessions: "+text.CodeSpan(v.Text)+" ("+v.Source.String()+").")
	}
}
