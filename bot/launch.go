package bot

import (
	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// The model, mode and effort a session starts with: the thread's own
// choice (`model`, `mode`; a scheduled run's model) wins; else the
// setting that applies in the thread's channel (package settings), read
// at each launch, so that a resumed session takes a changed model or
// effort. A mode is a session's state (plan ends in default when Claude's
// plan is approved): a session started without one of its own takes the
// channel's into the thread's record (ensureProcess).

// launchSetting is one of them: its value ("" for the CLI's own) and,
// when it came from the settings, where from (for `status`).
type launchSetting struct {
	value string
	from  string
}

// shown is the value as `status` says it.
func (s launchSetting) shown() string {
	v := s.value
	if v == "" {
		v = "default"
	}
	if s.from != "" {
		v += " (" + s.from + ")"
	}
	return v
}

// launchDefaults are the model, mode and effort the thread t of ref
// starts a session with.
type launchDefaults struct{ model, mode, effort launchSetting }

func launchFor(r *settings.Resolver, ref adapters.ThreadRef, t store.Thread) launchDefaults {
	where := thread.Where(ref)
	get := func(n settings.Name, own string) launchSetting {
		if own != "" {
			return launchSetting{value: own}
		}
		v := r.Get(where, n)
		if !v.Set() || v.Text == "default" {
			return launchSetting{}
		}
		return launchSetting{value: v.Text, from: v.Source.String()}
	}
	return launchDefaults{
		model:  get(settings.Model, t.Model),
		mode:   get(settings.Mode, t.Mode),
		effort: get(settings.Effort, ""),
	}
}

// apply gives o the model and effort to start with.
func (d launchDefaults) apply(o claudeproc.Options) claudeproc.Options {
	o.Model, o.Effort = d.model.value, d.effort.value
	return o
}

// effortShown is the effort for `status`'s model line: nothing when the
// CLI's own.
func (d launchDefaults) effortShown() string {
	if d.effort.value == "" {
		return ""
	}
	return " · Effort: " + d.effort.shown()
}
