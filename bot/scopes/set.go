package scopes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/workspace"
)

// Commands implements thread.Commander: `settings`, `set`, `unset`. `set`
// and `unset` take the rest of the message (Line), so that instructions
// keep their lines.
func (e *Extension) Commands() []thread.Command {
	return []thread.Command{
		{Name: "settings", Usage: []string{"settings"},
			Help:   "every setting that applies in this thread, and where its value comes from",
			Claims: func(args []string) bool { return len(args) == 0 },
			Run:    thread.Bind((*part).cmdSettings), After: "cost"},
		{Name: "set", Who: thread.Admins, Usage: []string{"set [--workspace|--platform|--bot] <setting> <value>"},
			Help: "set one of this channel's settings (admins; wider scopes: bot admins); `instructions` takes the rest of the message",
			Line: true, Claims: namesSetting, Run: thread.Bind((*part).cmdSet)},
		{Name: "unset", Who: thread.Admins, Usage: []string{"unset [--workspace|--platform|--bot] <setting>"},
			Help: "remove a value set in chat, so the wider one applies again",
			Line: true, Claims: namesSetting, Run: thread.Bind((*part).cmdUnset)},
	}
}

// namesSetting: the rest of a `set` or `unset` is empty (its usage is
// said), begins with a flag (a scope's, checked by the command), names a
// setting, or names something only a command would (a key with a slash
// or a dot: refused by the command, saying why). "set up CI" is a prompt
// for Claude.
func namesSetting(args []string) bool {
	words := strings.Fields(args[0])
	if len(words) == 0 || strings.HasPrefix(words[0], "--") || strings.ContainsAny(words[0], "/.") {
		return true
	}
	_, ok := settings.Lookup(settings.Name(strings.ToLower(words[0])))
	return ok
}

// change is what a `set` or `unset` asks for.
type change struct {
	scope settings.Scope
	spec  settings.Spec
	value string // canonical; "" unsets
}

// errUsage: the words do not make a change; the reply is the usage.
var errUsage = errors.New("usage")

// scopeFlags are the scopes wider than the channel, by flag: each is
// one of the scopes the thread lies in, never a key given in the message.
var scopeFlags = map[string]settings.Level{
	"--workspace": settings.LevelWorkspace,
	"--platform":  settings.LevelPlatform,
	"--bot":       settings.LevelBot,
}

// parseChange reads "[--flag] <setting> [value…]" at w. The value is the
// rest of the text as written (its lines kept), checked by the setting's
// Parse.
func parseChange(w settings.Where, rest string, unset bool) (change, error) {
	word, rest := cutWord(rest)
	scope := settings.Scope{Level: settings.LevelChannel, Key: w.ChannelKey()}
	if strings.HasPrefix(word, "-") {
		level, ok := scopeFlags[strings.ToLower(word)]
		if !ok {
			return change{}, fmt.Errorf("%s is not an option: a setting is set for this channel, or with --workspace, --platform or --bot for every channel of this one's workspace, platform or bot", text.CodeSpan(word))
		}
		var err error
		if scope, err = scopeAt(w, level); err != nil {
			return change{}, err
		}
		word, rest = cutWord(rest)
	}
	if word == "" {
		return change{}, errUsage
	}
	spec, ok := settings.Lookup(settings.Name(strings.ToLower(word)))
	if !ok {
		verb := map[bool]string{false: "set", true: "unset"}[unset]
		return change{}, fmt.Errorf("there is no setting %s; the settings: %s (to ask Claude, begin with a backslash: `\\%s …`)", text.CodeSpan(word), names(), verb)
	}
	c := change{scope: scope, spec: spec}
	switch {
	case unset && rest != "":
		return change{}, errUsage
	case unset:
		return c, nil
	case rest == "":
		return change{}, fmt.Errorf("give %s a value (`unset %s` removes one)", spec.Name, spec.Name)
	}
	v, err := spec.Parse(rest)
	if err != nil {
		return change{}, err
	}
	if v == "" {
		return change{}, fmt.Errorf("give %s a value (`unset %s` removes one)", spec.Name, spec.Name)
	}
	c.value = v
	return c, nil
}

// cutWord is the first word of s and what follows it, without the
// whitespace between.
func cutWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}

// scopeAt is the scope of that level w lies in.
func scopeAt(w settings.Where, level settings.Level) (settings.Scope, error) {
	for _, s := range w.Scopes() {
		if s.Level == level {
			return s, nil
		}
	}
	return settings.Scope{}, fmt.Errorf("this channel belongs to no %s the bot knows of: use --platform", level)
}

func names() string {
	var out []string
	for _, s := range settings.Specs() {
		out = append(out, text.CodeSpan(string(s.Name)))
	}
	return strings.Join(out, ", ")
}

func (p *part) cmdSet(ctx context.Context, ev adapters.Event, args []string) {
	p.apply(ctx, ev, args[0], false)
}

func (p *part) cmdUnset(ctx context.Context, ev adapters.Event, args []string) {
	p.apply(ctx, ev, args[0], true)
}

// apply makes a `set` or `unset`: checked, stored, applied, audited, said.
func (p *part) apply(ctx context.Context, ev adapters.Event, rest string, unset bool) {
	verb, usage := "set", "set [--workspace|--platform|--bot] <setting> <value>"
	if unset {
		verb, usage = "unset", "unset [--workspace|--platform|--bot] <setting>"
	}
	w := thread.Where(p.t.Ref())
	c, err := parseChange(w, rest, unset)
	switch {
	case errors.Is(err, errUsage):
		p.t.Reply(ctx, fmt.Sprintf("Usage: `%s`. `settings` lists the settings. (To ask Claude, begin with another word, or a backslash: `\\%s …`.)", usage, verb))
		return
	case err != nil:
		p.t.Reply(ctx, "Nothing changed: "+err.Error()+".")
		return
	}
	target := fmt.Sprintf("%s at %s", c.spec.Name, c.scope)
	before, after, refused, failed := p.commit(ctx, w, c, ev.User.ID)
	switch {
	case refused != nil:
		p.t.Audit(ctx, ev.User.ID, "refused", verb+" "+target, refused.Error()+"; value "+auditValue(c.spec, c.value, 500), false)
		p.t.Tell(ctx, ev.User, "Nothing changed: "+refused.Error()+".")
		return
	case failed != nil:
		p.t.Log().Error("store a setting set in chat", "setting", c.spec.Name, "scope", c.scope.String(), "err", failed)
		p.t.Reply(ctx, fmt.Sprintf("Nothing changed: the setting could not be stored (%v).", failed))
		return
	}
	p.t.Audit(ctx, ev.User.ID, verb, target, fmt.Sprintf("before: %s (%s); after: %s (%s)",
		auditValue(c.spec, before.Text, 0), before.Source, auditValue(c.spec, after.Text, 0), after.Source), true)
	p.t.Reply(ctx, changedText(c, before, after))
}

// commit makes c as user, at w, in one step under the extension's lock:
// refused says why the resolver refuses it, failed why the store did
// (nothing changed either way); else the values that applied at w before
// and after.
func (p *part) commit(ctx context.Context, w settings.Where, c change, user string) (before, after settings.Value, refused, failed error) {
	r := p.t.Scopes()
	p.ext.mu.Lock()
	defer p.ext.mu.Unlock()
	if err := r.CheckChat(w, c.scope, c.spec.Name, c.value, user); err != nil {
		return before, after, err, nil
	}
	// One time for the row and the resolver, at the store's precision: a
	// restart loads what runs now.
	at := p.t.Now().UTC().Truncate(time.Millisecond)
	if err := p.save(ctx, c, user, at); err != nil {
		return before, after, nil, err
	}
	before = r.SetChat(w, c.scope, c.spec.Name, c.value, user, at)
	return before, r.Get(w, c.spec.Name), nil, nil
}

// save stores the change: storage first, so that a value applied is a
// value kept.
func (p *part) save(ctx context.Context, c change, by string, at time.Time) error {
	if c.value == "" {
		return p.ext.st.DeleteScopeSetting(ctx, int(c.scope.Level), c.scope.Key, string(c.spec.Name))
	}
	return p.ext.st.SaveScopeSetting(ctx, store.ScopeSetting{
		Level: int(c.scope.Level), ScopeKey: c.scope.Key, Name: string(c.spec.Name),
		Value: c.value, SetBy: by, SetAt: at,
	})
}

// auditValue is v as the audit keeps it: quoted (lines escaped), a
// repository's credentials redacted, cut at n bytes when n > 0.
func auditValue(spec settings.Spec, v string, n int) string {
	if spec.Name == settings.Repo {
		v = workspace.Redact(v)
	}
	if n > 0 {
		v = text.Shorten(v, n)
	}
	return fmt.Sprintf("%q", v)
}

// changedText says what the change did: the value at its scope, what
// applies here now, and when sessions see it.
func changedText(c change, before, after settings.Value) string {
	var b strings.Builder
	if c.value == "" {
		fmt.Fprintf(&b, "%s has no value of its own at %s now.", c.spec.Name, c.scope)
	} else {
		fmt.Fprintf(&b, "%s is %s at %s.", c.spec.Name, shown(c.spec, c.value), c.scope)
	}
	if after.Source.Scope != c.scope || after.Source.Origin != settings.FromChat {
		fmt.Fprintf(&b, " Here %s is %s (%s).", c.spec.Name, shown(c.spec, after.Text), sourceText(after))
	}
	if before.Text == after.Text {
		b.WriteString(" What applies here is as before.")
		return b.String()
	}
	what := "it"
	if c.value == "" {
		what = "what applies here now"
	}
	switch c.spec.Name {
	case settings.Instructions: // re-read before each turn (the kernel)
		fmt.Fprintf(&b, " Sessions here use %s from their next turn.", what)
	case settings.Model, settings.Mode, settings.Effort, settings.Repo, settings.Image, settings.MCP:
		fmt.Fprintf(&b, " Sessions started from now on use %s.", what)
	default:
		fmt.Fprintf(&b, " %s applies from the next message.", strings.ToUpper(what[:1])+what[1:])
	}
	return b.String()
}
