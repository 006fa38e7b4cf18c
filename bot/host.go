package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
	"github.com/claudeops/claudeops/store"
)

// host is the bot's side of the face its extensions see (thread.Host).
type host struct{ b *Bot }

var _ thread.Host = host{}

func (h host) Now() time.Time             { return h.b.now() }
func (h host) Log() *slog.Logger          { return h.b.log }
func (h host) Store() thread.Reader       { return h.b.store }
func (h host) IsAdmin(user string) bool   { return h.b.cfg.Scopes.IsBotAdmin(user) }
func (h host) Scopes() *settings.Resolver { return h.b.cfg.Scopes }
func (h host) Settings() thread.Settings  { return h.b.settings() }

func (b *Bot) settings() thread.Settings {
	return thread.Settings{Workdir: b.cfg.Workdir, ApprovalTimeout: b.cfg.ApprovalTimeout, StopGrace: b.cfg.StopGrace}
}

func (h host) PostTo(key adapters.ThreadKey, msg any) bool {
	return h.b.toWorker(key, input{kind: inPosted, msg: msg})
}

func (h host) PostChannel(channel string, except adapters.ThreadKey, msg any) {
	h.b.toChannel(channel, except, input{kind: inPosted, msg: msg})
}

func (h host) OpenThread(ctx context.Context, platform, channel string, head adapters.Message) (adapters.ThreadRef, error) {
	op, ok := h.b.adapter(platform).(adapters.Opener)
	if !ok {
		return adapters.ThreadRef{}, thread.ErrNoOpener
	}
	return op.OpenThread(ctx, channel, head)
}

// scheduleRunner is an extension that runs scheduled prompts
// (bot/scheduled): the scheduler's Runner is the bot, which hands each
// run to it.
type scheduleRunner interface {
	RunScheduled(ctx context.Context, s store.Schedule, slot time.Time) (store.ScheduleRun, error)
}

// errNoRunner: no extension of the bot runs schedules.
var errNoRunner = errors.New("no extension of this bot runs schedules")

// RunScheduled runs one scheduled prompt through the extension that runs
// them; it is the scheduler's Runner.
func (b *Bot) RunScheduled(ctx context.Context, s store.Schedule, slot time.Time) (store.ScheduleRun, error) {
	for _, e := range b.cfg.Extensions {
		if r, ok := e.(scheduleRunner); ok {
			return r.RunScheduled(ctx, s, slot)
		}
	}
	return store.ScheduleRun{}, fmt.Errorf("schedule %d: %w", s.ID, errNoRunner)
}

// toChannel queues in for the threads of a channel that have a worker now,
// but except.
func (b *Bot) toChannel(channel string, except adapters.ThreadKey, in input) {
	b.mu.Lock()
	var keys []adapters.ThreadKey
	for k, w := range b.workers {
		if k != except && w.ref.ChannelKey() == channel {
			keys = append(keys, k)
		}
	}
	b.mu.Unlock()
	for _, k := range keys {
		b.toWorker(k, in)
	}
}

// sweep runs s every s.SweepEvery until ctx ends.
func sweep(ctx context.Context, s thread.Sweeper) {
	tick := time.NewTicker(s.SweepEvery())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.Sweep(ctx)
		}
	}
}
