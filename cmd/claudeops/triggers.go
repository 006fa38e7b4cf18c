package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/reviews"
	"github.com/claudeops/claudeops/bot/scheduled"
	"github.com/claudeops/claudeops/store"
	"github.com/claudeops/claudeops/triggers"
)

const triggersFileVar = "CLAUDEOPS_TRIGGERS_FILE"

// loadTriggersFile reads and checks the triggers file (package triggers):
// every problem with its line. Its endpoints are on the HTTP listener.
func (c *config) loadTriggersFile() []problem {
	if c.TriggersFile == "" {
		return nil
	}
	if c.HTTPAddr == "" {
		return []problem{{name: triggersFileVar, want: "its endpoints are on the HTTP listener: set CLAUDEOPS_HTTP_ADDR too"}}
	}
	data, err := os.ReadFile(c.TriggersFile)
	if err != nil {
		return []problem{{name: triggersFileVar, want: fmt.Sprintf("read it: %v", err)}}
	}
	ts, err := triggers.Parse(data, readTriggerSecret)
	if err != nil {
		return fileProblems(triggersFileVar, err)
	}
	c.triggers = ts
	return nil
}

// reviewNeedsForge: a review trigger tells the bot's own comments by the
// forge's account (its token's user), so it needs a forge.
func (c *config) reviewNeedsForge() []problem {
	for _, t := range c.triggers {
		if t.Review && len(c.Forges) == 0 {
			return []problem{{name: triggersFileVar, want: fmt.Sprintf("the review trigger %q needs the forge its pull requests are on: set CLAUDEOPS_FORGES", t.Name)}}
		}
	}
	return nil
}

// readTriggerSecret reads a trigger's secret_file; its content is never
// said.
func readTriggerSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, fmt.Errorf("the file %s is empty", path)
	}
	return b, nil
}

// triggerKeep is how long a trigger's delivery ids and ended runs are
// kept: a forge redelivers for days, not months. A delivery replayed
// after it is held by the signature, the filters and the rate only.
const triggerKeep = 90 * 24 * time.Hour

// triggerPrune is how often what is older than triggerKeep is deleted.
const triggerPrune = time.Hour

// triggerRuns is the triggers' endpoint and the runs it started, stopped
// with the scheduler's stage.
type triggerRuns struct {
	h    *triggers.Handler
	st   *store.Store
	stop context.CancelFunc
	log  *slog.Logger
}

// newTriggers makes the endpoint of cfg's triggers (nil without any): an
// accepted event runs as the schedules extension runs a scheduled run.
// Runs a stopped bot left running are settled first.
func (a *app) newTriggers(ctx context.Context, cfg config, ext extensions) *triggers.Handler {
	if len(cfg.triggers) == 0 {
		return nil
	}
	if err := a.st.SettleTriggerRuns(ctx, time.Now()); err != nil {
		a.log.Warn("settle trigger runs", "err", err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := triggers.New(rctx, triggers.Config{
		Triggers: cfg.triggers, Records: a.st, Log: a.log, Observer: a.met,
		Runner:  triggerRunner{s: ext.schedules, timeout: cfg.Scheduler.Timeout},
		Reviews: reviewRoute{st: a.st, forges: cfg.forges, ext: ext.reviews},
	})
	a.triggers = &triggerRuns{h: h, st: a.st, stop: cancel, log: a.log}
	ext.triggers.h = h
	return h
}

// run stores the requests' counts every second and prunes old deliveries
// and runs every hour (and at start) until its stage stops, then stops
// the runs under way (and stores the last counts).
func (t *triggerRuns) run(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	prune := time.NewTicker(triggerPrune)
	defer prune.Stop()
	t.prune(ctx)
	for {
		select {
		case <-tick.C:
			if err := t.h.Flush(ctx); err != nil && ctx.Err() == nil {
				t.log.Warn("store the trigger requests' counts", "err", err)
			}
		case <-prune.C:
			t.prune(ctx)
		case <-ctx.Done():
			t.stop()
			t.h.Wait()
			return nil
		}
	}
}

func (t *triggerRuns) prune(ctx context.Context) {
	n, err := t.st.PruneTriggers(ctx, time.Now().Add(-triggerKeep))
	switch {
	case err != nil && ctx.Err() == nil:
		t.log.Warn("prune the triggers' old deliveries and runs", "err", err)
	case n > 0:
		t.log.Info("pruned the triggers' old deliveries and runs", "rows", n)
	}
}

// triggerRunner runs an event through the schedules extension, within a
// scheduled run's time (CLAUDEOPS_SCHEDULE_TIMEOUT).
type triggerRunner struct {
	s       *scheduled.Extension
	timeout time.Duration
}

func (r triggerRunner) RunTrigger(ctx context.Context, f triggers.Fire) (triggers.Ran, error) {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	res, err := r.s.RunTriggered(ctx, scheduled.Triggered{
		Trigger: f.Trigger, Platform: f.Platform, Channel: f.Channel, Head: f.Head, Prompt: f.Prompt,
	})
	return triggers.Ran{ThreadKey: res.ThreadKey, CostUSD: res.CostUSD}, err
}

// reviewRoute takes a review trigger's events: the store's record of the
// bot's pull requests, the forge account the bot uses there (its token's
// user), and the thread's side (bot/reviews).
type reviewRoute struct {
	st     *store.Store
	forges forges
	ext    *reviews.Extension
}

func (r reviewRoute) PullRequestByURL(ctx context.Context, url string) (store.PullRequest, bool, error) {
	return r.st.PullRequestByURL(ctx, url)
}

func (r reviewRoute) Self(ctx context.Context, pr store.PullRequest) (string, error) {
	f, _, ok := r.forges.ForgeOf(pr.Repo)
	if !ok {
		return "", fmt.Errorf("no forge is configured for %s (CLAUDEOPS_FORGES)", pr.Repo)
	}
	return f.Self(ctx)
}

func (r reviewRoute) Post(_ context.Context, pr store.PullRequest, rv triggers.Review) error {
	return r.ext.Deliver(adapters.ThreadKey(pr.ThreadKey), reviews.Item{
		PR: rv.PR, Number: rv.Number, Author: rv.Author, What: rv.What, Body: rv.Body, Quoted: rv.Quoted(),
	})
}

// triggerShow is what `triggers` shows: the file's triggers and the
// store's counts (the endpoint's flushed first: h, set once it is made)
// and runs.
type triggerShow struct {
	ts []triggers.Trigger
	st *store.Store
	h  *triggers.Handler
}

func (s *triggerShow) In(ctx context.Context, platform, channel string) ([]scheduled.TriggerState, error) {
	if s.h != nil {
		if err := s.h.Flush(ctx); err != nil {
			return nil, err
		}
	}
	counts, err := s.st.TriggerCounts(ctx)
	if err != nil {
		return nil, err
	}
	var out []scheduled.TriggerState
	for _, t := range s.ts {
		if t.Platform != platform || t.Channel != channel {
			continue
		}
		st := scheduled.TriggerState{Name: t.Name, Kind: t.Kind, PerHour: t.PerHour}
		for _, c := range counts {
			if c.Trigger == t.Name {
				st.Counts = append(st.Counts, c)
			}
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *triggerShow) Runs(ctx context.Context, name string, limit int) ([]store.TriggerRun, error) {
	return s.st.TriggerRuns(ctx, name, limit)
}
