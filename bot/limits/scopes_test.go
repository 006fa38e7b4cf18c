package limits

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/bot/thread/threadtest"
	"github.com/claudeops/claudeops/settings"
)

// inChannel is a fake thread "main" of channel console/<channel>, with its
// spends, under r.
func inChannel(r *settings.Resolver, channel string, spent, day float64) *threadtest.Thread {
	ft := threadtest.New("main", "alice")
	ft.Key = adapters.ThreadRef{Platform: "console", Channel: channel, Thread: "main"}
	ft.Rec.Key, ft.Rec.Channel = string(ft.Key.Key()), channel
	ft.Records.Spent = map[string]float64{string(ft.Key.Key()): spent}
	ft.Records.DaySpent = map[string]float64{ft.Key.ChannelKey(): day}
	ft.Resolver = r
	return ft
}

// chatSet sets n at channel console/<channel> from chat as user would:
// checked first (a channel admin may only tighten a budget).
func chatSet(t *testing.T, r *settings.Resolver, channel string, n settings.Name, value, user string) error {
	t.Helper()
	w := settings.Where{Platform: "console", Channel: channel}
	scope := settings.Scope{Level: settings.LevelChannel, Key: w.ChannelKey()}
	if err := r.CheckChat(w, scope, n, value, user); err != nil {
		return err
	}
	r.SetChat(w, scope, n, value, user, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	return nil
}

// TestChannelBudgets: a channel's budgets apply in that channel only (A's
// never limits B, B's never A), over the bot's configuration; a channel
// admin's tightened budget stops a thread at the tighter amount and never
// loosens one; what the refusal, the cap and status say name where the
// budget comes from.
func TestChannelBudgets(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		set     func(t *testing.T, r *settings.Resolver)
		channel string
		spent   float64 // the thread's
		day     float64 // the channel's today
		refuse  string  // the refusal's start, "" for none
		capArg  string
	}{
		{name: "A's channel budget spent refuses A", channel: "A", day: 1,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "A", settings.BudgetChannelDay, "1", "root"))
			},
			refuse: "this channel's budget for today is spent: $1.0000 of $1 (channel console/A, set in chat by root", capArg: "0.000001"},
		{name: "A's channel budget never limits B", channel: "B", day: 5,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "A", settings.BudgetChannelDay, "1", "root"))
			}},
		{name: "B's thread budget never limits A", channel: "A", spent: 3,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "B", settings.BudgetThread, "0.5", "root"))
			}},
		{name: "a channel's 0 lifts the configuration's budget there only (bot admins')", cfg: Config{ThreadUSD: 1}, channel: "A", spent: 3,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "A", settings.BudgetThread, "0", "root"))
			}},
		{name: "and B keeps the configuration's", cfg: Config{ThreadUSD: 1}, channel: "B", spent: 3,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "A", settings.BudgetThread, "0", "root"))
			},
			refuse: "this thread's budget is spent: $3.0000 of $1 (CLAUDEOPS_BUDGET_THREAD_USD)", capArg: "0.000001"},
		{name: "a channel admin tightens: the thread stops at the tighter amount", cfg: Config{ThreadUSD: 10}, channel: "A", spent: 2,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "A", settings.Admins, "carol", "root"))
				mustSet(t, chatSet(t, r, "A", settings.BudgetThread, "2", "carol"))
			},
			refuse: "this thread's budget is spent: $2.0000 of $2 (channel console/A, set in chat by carol", capArg: "0.000001"},
		{name: "the tighter amount caps the process", cfg: Config{ThreadUSD: 10}, channel: "A", spent: 0.5,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "A", settings.Admins, "carol", "root"))
				mustSet(t, chatSet(t, r, "A", settings.BudgetThread, "2", "carol"))
			},
			capArg: "1.5"},
		{name: "a channel admin cannot loosen: the configuration's holds", cfg: Config{ThreadUSD: 1}, channel: "A", spent: 2,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "A", settings.Admins, "carol", "root"))
				for _, v := range []string{"5", "0"} {
					if err := chatSet(t, r, "A", settings.BudgetThread, v, "carol"); err == nil {
						t.Errorf("carol set the thread budget to %s", v)
					}
				}
			},
			refuse: "this thread's budget is spent: $2.0000 of $1 (CLAUDEOPS_BUDGET_THREAD_USD)", capArg: "0.000001"},
		{name: "a channel admin's looser value that got in is held to the wider one", cfg: Config{ThreadUSD: 1}, channel: "A", spent: 2,
			set: func(t *testing.T, r *settings.Resolver) {
				// As if the wider budget was tightened after carol's 5.
				w := settings.Where{Platform: "console", Channel: "A"}
				r.SetChat(w, settings.Scope{Level: settings.LevelChannel, Key: w.ChannelKey()}, settings.BudgetThread, "5", "carol", time.Now())
			},
			refuse: "this thread's budget is spent: $2.0000 of $1 (CLAUDEOPS_BUDGET_THREAD_USD)", capArg: "0.000001"},
		{name: "a channel admin of B cannot set A's", channel: "A", spent: 2,
			set: func(t *testing.T, r *settings.Resolver) {
				mustSet(t, chatSet(t, r, "B", settings.Admins, "carol", "root"))
				if err := chatSet(t, r, "A", settings.BudgetThread, "1", "carol"); err == nil {
					t.Error("B's admin set A's budget")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			var layer settings.Layer
			tt.cfg.PutSettings(&layer)
			r := settings.New(layer, []string{"root"})
			tt.set(t, r)
			ft := inChannel(r, tt.channel, tt.spent, tt.day)
			p := New(tt.cfg).Attach(ft).(*part)
			err := p.BeforePrompt(ctx, thread.Prompt{Text: "hi"})
			if got := errString(err); !strings.HasPrefix(got, tt.refuse) || (tt.refuse == "") != (got == "") {
				t.Errorf("refusal %q, want %q…", got, tt.refuse)
			}
			checkCap(t, p, tt.capArg)
		})
	}
}

func mustSet(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestChannelBudgetChanged: a budget changed while a session is live
// (idle) restarts it before the next prompt, so the next turn runs under
// the new cap; status and cost say where each budget comes from.
func TestChannelBudgetChanged(t *testing.T) {
	ctx := context.Background()
	r := settings.New(settings.Layer{}, []string{"root"})
	ft := inChannel(r, "A", 0.5, 0.5)
	p := New(Config{ThreadUSD: 10}).Attach(ft).(*part)
	var l thread.Launch
	p.BeforeLaunch(ctx, &l)
	ft.Current.Live = true
	if err := p.BeforePrompt(ctx, thread.Prompt{}); err != nil || len(ft.Stops) != 0 {
		t.Fatalf("before the change: %v, stops %q", err, ft.Stops)
	}
	mustSet(t, chatSet(t, r, "A", settings.BudgetThread, "2", "root"))
	mustSet(t, chatSet(t, r, "A", settings.BudgetChannelDay, "3", "root"))
	if err := p.BeforePrompt(ctx, thread.Prompt{}); err != nil || len(ft.Stops) != 1 {
		t.Fatalf("after the change: %v, stops %q (want the live process restarted)", err, ft.Stops)
	}
	l = thread.Launch{}
	p.BeforeLaunch(ctx, &l)
	if want := []string{"--max-budget-usd", "1.5"}; !slices.Equal(l.ExtraArgs, want) {
		t.Errorf("relaunch args %q, want %q", l.ExtraArgs, want)
	}
	s := thread.Status{ThreadSpent: 0.5}
	p.Status(ctx, &s)
	src := " (channel console/A, set in chat by root on 2026-11-29 12:00 UTC)"
	if want := " · budget $2" + src + ": $1.5000 left"; s.ThreadNote != want {
		t.Errorf("thread note %q, want %q", s.ThreadNote, want)
	}
	if want := []string{"This channel today (UTC): $0.5000 · budget $3" + src + ": $2.5000 left"}; !slices.Equal(s.Spend, want) {
		t.Errorf("spend lines %q, want %q", s.Spend, want)
	}
}
