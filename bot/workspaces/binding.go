package workspaces

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// A channel's repository is its `repo` setting (package settings), one
// story for `settings` and `repo`: the narrowest scope that gives one
// wins, and at one scope the settings file over chat over the
// configuration. Chat is `set repo` or a bot admin's `repo` (the same
// value, stored by scope); the configuration is CLAUDEOPS_REPOS, each
// binding at its channel's scope. "none" unbinds the channel (over a
// wider value or the configuration's). A binding an older `repo` stored
// in the channels table became a chat value at the channel's scope
// (store's migration "channel repos become settings"). A resolver that
// holds no repo at all (a bot built without the configuration's layer)
// falls back to Config.Repos.

// SettingSaver stores a setting given in chat at a scope, in place of
// the value it had there; *store.Store is one.
type SettingSaver interface {
	SaveScopeSetting(ctx context.Context, v store.ScopeSetting) error
}

// channelWhere is the place of a channel key ("platform/channel").
func channelWhere(channel string) settings.Where {
	platform, id, _ := strings.Cut(channel, "/")
	return settings.Where{Platform: platform, Channel: id}
}

// binding is the channel's repo setting: its value ("" or "none":
// unbound) and where it comes from.
func (e *Extension) binding(channel string) settings.Value {
	v := e.host.Scopes().Get(channelWhere(channel), settings.Repo)
	if !v.Set() {
		if repo := e.repos[channel]; repo != "" {
			v.Text, v.Source = repo, settings.Source{Scope: settings.Scope{Level: settings.LevelChannel, Key: channel}, Origin: settings.FromConfig, Var: "CLAUDEOPS_REPOS"}
		}
	}
	return v
}

// Repo is the repository channel is bound to ("" for none).
func (e *Extension) Repo(_ context.Context, channel string) string {
	if e.cfg.Manager == nil {
		return ""
	}
	if v := e.binding(channel); v.Text != noRepo {
		return v.Text
	}
	return ""
}

// HasForge says whether the operator configured a forge for repo (a
// schedule's --pr needs one).
func (e *Extension) HasForge(repo string) bool {
	if e.cfg.Forges == nil {
		return false
	}
	_, _, ok := e.cfg.Forges.ForgeOf(repo)
	return ok
}

// bind makes a bot admin's `repo <value>` the channel's repo setting:
// checked as `set` checks it (bot admins only; refused where the settings
// file manages it, saying where), stored, applied, audited with before and
// after. It reports whether it was.
func (p *part) bind(ctx context.Context, ev adapters.Event, value string) bool {
	w, scope := p.channelScope()
	r := p.t.Scopes()
	if p.refuseBind(ctx, ev, value) {
		return false
	}
	if p.ext.cfg.Channels == nil {
		p.t.Reply(ctx, "Could not save: this bot keeps no channel settings.")
		return false
	}
	at := p.t.Now().UTC().Truncate(time.Millisecond)
	if err := p.ext.cfg.Channels.SaveScopeSetting(ctx, store.ScopeSetting{
		Level: int(scope.Level), ScopeKey: scope.Key, Name: string(settings.Repo), Value: value, SetBy: ev.User.ID, SetAt: at,
	}); err != nil {
		p.t.Reply(ctx, "Could not save: "+err.Error())
		return false
	}
	before := r.SetChat(w, scope, settings.Repo, value, ev.User.ID, at)
	p.t.Audit(ctx, ev.User.ID, "repo", workspace.Redact(value), fmt.Sprintf("before: %q (%s)", workspace.Redact(before.Text), before.Source), true)
	return true
}

// channelScope is the place and scope of the thread's channel.
func (p *part) channelScope() (settings.Where, settings.Scope) {
	w := thread.Where(p.t.Ref())
	w.Thread = ""
	return w, settings.Scope{Level: settings.LevelChannel, Key: w.ChannelKey()}
}

// refuseBind refuses (told, audited) a `repo` of user's that the settings
// do not let them make: not a bot admin's, or where the settings file
// manages the channel's repo. It runs before any git.
func (p *part) refuseBind(ctx context.Context, ev adapters.Event, value string) bool {
	w, scope := p.channelScope()
	err := p.t.Scopes().CheckChat(w, scope, settings.Repo, value, ev.User.ID)
	if err == nil {
		return false
	}
	p.t.Audit(ctx, ev.User.ID, "refused", "repo", workspace.Redact(value)+": "+err.Error(), false)
	p.t.Tell(ctx, ev.User, "Not bound: "+err.Error()+".")
	return true
}

// repoText says what the channel and the thread work on, and where the
// binding comes from.
func (p *part) repoText(ctx context.Context) string {
	key := p.t.Ref().ChannelKey()
	v := p.ext.binding(key)
	s := "This channel is not bound to a repository; a bot admin can bind one with `repo <path or clone URL>`."
	switch repo := p.ext.Repo(ctx, key); {
	case repo != "":
		s = "This channel works on " + text.CodeSpan(workspace.Redact(repo)) + " (" + v.Source.String() + ")."
	case v.Text == noRepo:
		s = "This channel is bound to no repository (" + v.Source.String() + ")."
	}
	if wt, ok := p.worktree(); ok {
		s += "\nThis thread: branch " + text.CodeSpan(wt.Branch) + " (from " + text.ShortCommit(wt.Base) + ") in " + text.CodeSpan(wt.Path) + "."
	}
	return s
}

// settingSpec is the repo setting's definition.
func settingSpec() settings.Spec {
	s, _ := settings.Lookup(settings.Repo)
	return s
}
