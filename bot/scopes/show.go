package scopes

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/workspace"
)

// maxListed caps the entries of a list `settings` names.
const maxListed = 20

func (p *part) cmdSettings(ctx context.Context, ev adapters.Event, _ []string) {
	w := thread.Where(p.t.Ref())
	r := p.t.Scopes()
	if !r.MayUse(w, ev.User.ID) {
		p.t.Audit(ctx, ev.User.ID, "refused", "settings", "may not use the bot here", false)
		p.t.Tell(ctx, ev.User, "Only those who may use the bot here see its settings.")
		return
	}
	p.t.Reply(ctx, settingsText(r.All(w), p.t.Record().Model, p.t.Record().Mode))
	// The file's problem may name other channels and their values: told
	// to the bot admin alone, never in the thread.
	if problem := r.FileProblem(); problem != nil && r.IsBotAdmin(ev.User.ID) {
		p.t.Tell(ctx, ev.User, "The settings file on disk is not in use (the last good one is): "+problem.Error())
	}
}

// settingsText is `settings`: a line per setting, its value and where it
// comes from; the thread's own model and mode (its `model` and `mode`)
// over the scopes'.
func settingsText(values []settings.Value, model, mode string) string {
	lines := []string{"Settings here (the narrowest scope that gives one wins; `set`/`unset` change them):"}
	for _, v := range values {
		spec, _ := settings.Lookup(v.Name)
		own := map[settings.Name]string{settings.Model: model, settings.Mode: mode}[v.Name]
		switch {
		case own != "":
			lines = append(lines, fmt.Sprintf("• %s: %s — this thread's own (`%s`)", v.Name, text.CodeSpan(own), v.Name))
		case !v.Set():
			lines = append(lines, fmt.Sprintf("• %s: %s (default)", v.Name, shownDefault(spec, v.Text)))
		default:
			lines = append(lines, fmt.Sprintf("• %s: %s — %s", v.Name, shown(spec, v.Text), v.Source))
		}
	}
	return strings.Join(lines, "\n")
}

// shownDefault is a default value: an enum's first word, else what the
// setting's absence means.
func shownDefault(spec settings.Spec, v string) string {
	if v != "" {
		return text.CodeSpan(v)
	}
	switch spec.Name {
	case settings.Users:
		return "nobody named: admins only"
	case settings.Admins:
		return "nobody named: the bot's admins only"
	}
	return "none"
}

// shown is a value as `settings` and the replies show it: instructions by
// their first line and length, lists by their first entries, a
// repository without its credentials.
func shown(spec settings.Spec, v string) string {
	switch {
	case v == "" || v == "0" && (spec.Kind == settings.KindUSD || spec.Kind == settings.KindCount):
		return "none"
	case spec.Kind == settings.KindText:
		lines := strings.Count(v, "\n") + 1
		return fmt.Sprintf("%s (%s, %s)", text.CodeSpan(text.Shorten(firstLine(v), 80)),
			text.Plural(lines, "1 line", fmt.Sprintf("%d lines", lines)),
			text.Plural(utf8.RuneCountInString(v), "1 character", fmt.Sprintf("%d characters", utf8.RuneCountInString(v))))
	case spec.Kind == settings.KindUsers || spec.Kind == settings.KindNames:
		list := strings.Split(v, ",")
		more := ""
		if len(list) > maxListed {
			list, more = list[:maxListed], fmt.Sprintf(" and %d more", len(list)-maxListed)
		}
		for i, e := range list {
			list[i] = text.CodeSpan(e)
		}
		return strings.Join(list, ", ") + more
	case spec.Name == settings.Repo:
		return text.CodeSpan(workspace.Redact(v))
	}
	return text.CodeSpan(v)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// sourceText is where v comes from, for a reply.
func sourceText(v settings.Value) string {
	if !v.Set() {
		return "the default"
	}
	return v.Source.String()
}
