package main

import (
	"log/slog"

	"github.com/claudeops/claudeops/bot/limits"
	"github.com/claudeops/claudeops/bot/mcpservers"
	"github.com/claudeops/claudeops/bot/memory"
	"github.com/claudeops/claudeops/bot/reviews"
	"github.com/claudeops/claudeops/bot/runnerimage"
	"github.com/claudeops/claudeops/bot/scheduled"
	"github.com/claudeops/claudeops/bot/scopes"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/workspaces"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// extensions are the features the bot's threads host (bot.Config.Extensions,
// package thread), built from the configuration; the bot imports none of
// them.
type extensions struct {
	limits     *limits.Extension
	workspaces *workspaces.Extension
	// schedules runs the scheduler's prompts in threads (through the
	// bot, the scheduler's Runner) and takes the schedule commands to the
	// scheduler (SetScheduler).
	schedules *scheduled.Extension
	// mcp gives channels the operator's MCP servers and plugins.
	mcp *mcpservers.Extension
	// image gives channels' sessions the runner's image their settings
	// name.
	image *runnerimage.Extension
	// scopes shows and changes the settings from chat (settings, set,
	// unset), keeping what chat sets in the store.
	scopes *scopes.Extension
	// memory keeps a channel's facts and gives them to its sessions.
	memory *memory.Extension
	// reviews shows a bot's pull request's comments and reviews in the
	// thread that opened it (a review trigger's, triggers.go) and lets
	// its starter hand them to Claude.
	reviews *reviews.Extension
	// triggers is what `triggers` shows (triggers.go); nil without any.
	triggers *triggerShow
}

// extensionsConfig holds the extensions' settings, each its package's
// Config with the env tags (what they are built with besides is set in
// newExtensions).
type extensionsConfig struct {
	Limits     limits.Config
	Workspaces workspaces.Config
	Schedules  scheduled.Config
	MCP        mcpservers.Config
}

// newExtensions builds the extensions over the open store.
func newExtensions(cfg config, st *store.Store, log *slog.Logger) (extensions, error) {
	m, err := newWorkspaces(cfg, log)
	if err != nil {
		return extensions{}, err
	}
	wc := cfg.Extensions.Workspaces
	wc.Manager, wc.Channels, wc.Pulls = m, st, st
	if len(cfg.forges) > 0 {
		wc.Forges = cfg.forges
	}
	ws := workspaces.New(wc)
	sc := cfg.Extensions.Schedules
	sc.Repos = ws // a schedule's --push needs its channel bound to a repository
	var show *triggerShow
	if len(cfg.triggers) > 0 {
		show = &triggerShow{ts: cfg.triggers, st: st}
		sc.Triggers = show
	}
	return extensions{
		limits:     limits.New(cfg.Extensions.Limits),
		workspaces: ws,
		schedules:  scheduled.New(sc),
		mcp:        mcpservers.New(cfg.mcp, st),
		image:      runnerimage.New(runnerImage(cfg.Runner)),
		scopes:     scopes.New(st),
		memory:     memory.New(memory.Config{Facts: st}),
		reviews:    reviews.New(),
		triggers:   show,
	}, nil
}

// list is the extensions in the order their hooks run: limits first (a
// turn's spend, and why a limit stopped it), then workspaces (the change
// summary, a scheduled run's push), then schedules (the run's record),
// then the operator's MCP servers (launch only), then the channel's image
// (launch and status), then the settings commands, then the channel's
// facts (instructions, after any the channel's settings give), then the
// review loop (a pull request's review, `review`).
func (e extensions) list() []thread.Extension {
	return []thread.Extension{e.limits, e.workspaces, e.schedules, e.mcp, e.image, e.scopes, e.memory, e.reviews}
}

// checkSettings gives the resolver the extensions' checks of values set
// from chat: an MCP server the servers file lists, an image where the
// runner has one.
func (e extensions) checkSettings(r *settings.Resolver) {
	r.Check(settings.MCP, e.mcp.CheckNames)
	r.Check(settings.Image, e.image.CheckImage)
}

// runnerImage says what the runner in use is to the image extension
// (choose has settled it by now).
func runnerImage(r runnerConfig) runnerimage.Config {
	k := r.inUse()
	if k == nil {
		return runnerimage.Config{Runner: r.Kind}
	}
	return runnerimage.Config{Runner: k.Name(), Images: k.ImageCLI()}
}
