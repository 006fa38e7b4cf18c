package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/claudeops/claudeops/bot"
	"github.com/claudeops/claudeops/bot/scopes"
	"github.com/claudeops/claudeops/internal/fspath"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// The settings by scope (package settings) as cmd builds them: the
// configuration's values at the bot's scope (and CLAUDEOPS_REPOS' at their
// channels'), the settings file read at start (settingsfile.go watches it
// after), the values set in chat as the store keeps them.

const settingsFileVar = "CLAUDEOPS_SETTINGS_FILE"

// loadSettingsFile reads the settings file at start: each of its problems
// is a configuration problem, with its line; none applies. The file may
// not lie where sessions write (it is also one of the bot's own files,
// ownFiles: the sandbox hides it, no tool call may touch it).
func (c *config) loadSettingsFile() []problem {
	if c.SettingsFile == "" {
		return nil
	}
	// Whoever writes it is a bot admin: no session may.
	for _, dir := range []string{c.Bot.Workdir, c.Workspaces} {
		if dir != "" && fspath.Within(resolved(c.SettingsFile), resolved(dir)) {
			return []problem{{name: settingsFileVar, want: fmt.Sprintf("it lies in %s, where sessions write: a session could give itself any setting; keep it apart", dir)}}
		}
	}
	l, sum, err := settings.Load(c.SettingsFile)
	if err != nil {
		return fileProblems(settingsFileVar, err)
	}
	c.settingsLayer, c.settingsSum = l, sum
	return nil
}

// fileProblems are a file's problems (settings.Problems: each with its
// line) as the configuration's, under the variable naming the file.
func fileProblems(name string, err error) []problem {
	var ps settings.Problems
	if !errors.As(err, &ps) {
		return []problem{{name: name, want: err.Error()}}
	}
	out := make([]problem, len(ps))
	for i, p := range ps {
		out[i] = problem{name: name, want: p.Error()}
	}
	return out
}

// newScopes builds the resolver the bot and its extensions ask: b is the
// bot's configuration once the platforms have added theirs (the console's
// operator).
func newScopes(ctx context.Context, cfg config, b bot.Config, st *store.Store, log *slog.Logger) (*settings.Resolver, error) {
	r := settings.New(configLayer(cfg, b, log), b.Admins)
	r.SetFile(cfg.settingsLayer)
	rows, err := st.ScopeSettings(ctx)
	if err != nil {
		return nil, err
	}
	chat, err := scopes.ChatLayer(rows)
	if err != nil { // the others apply
		log.Warn("settings stored from chat left out", "err", err)
	}
	r.LoadChat(chat)
	return r, nil
}

// configLayer is what the environment gives: who may use the bot and the
// session quota (bot.ConfigLayer), the budgets (limits.Config.PutSettings)
// and the runner's image at the bot's scope, each naming its variable, and
// the CLAUDEOPS_REPOS bindings at their channels' scopes.
func configLayer(cfg config, b bot.Config, log *slog.Logger) settings.Layer {
	l := bot.ConfigLayer(b)
	put := func(scope settings.Scope, n settings.Name, text, from string) {
		spec, _ := settings.Lookup(n)
		canon, err := spec.Parse(text)
		if err != nil { // checked as configuration already; said, not fatal
			log.Warn("a configured value is not a setting's: left out of the settings", "var", from, "err", err)
			return
		}
		l.Put(n, settings.Value{Text: canon, Source: settings.Source{Scope: scope, Origin: settings.FromConfig, Var: from}})
	}
	cfg.Extensions.Limits.PutSettings(&l)
	if img := cfg.raw["CLAUDEOPS_RUNNER_IMAGE"]; strings.TrimSpace(img) != "" {
		put(settings.Bot, settings.Image, img, "CLAUDEOPS_RUNNER_IMAGE")
	}
	for _, bind := range cfg.Extensions.Workspaces.Repos {
		key, repo, _ := strings.Cut(bind, "=")
		put(settings.Scope{Level: settings.LevelChannel, Key: strings.TrimSpace(key)}, settings.Repo, repo, "CLAUDEOPS_REPOS")
	}
	return l
}
