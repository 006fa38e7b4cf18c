package limits

import (
	"strconv"

	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
)

// budget is one budget that applies in a thread: its amount (0: none)
// and what gave it, for people.
type budget struct {
	usd float64
	// from names what gave it: the setting's Source where one is set,
	// else the variable of the bot's configuration (Config).
	from string
	// set: the settings gave it (from is a Source).
	set bool
}

// budgets are the budgets that apply in a thread's channel now.
type budgets struct{ thread, channelDay, run budget }

// budgets reads the thread's channel's effective settings (budget.*, the
// narrowest scope that gives one) at each call, so that a change from chat
// or the settings file applies at the thread's next prompt or launch; a
// budget no scope gives is the bot's configuration's (Config). A channel's
// value is looked up at that channel only: it never reaches another.
func (p *part) budgets() budgets {
	w, r := thread.Where(p.t.Ref()), p.t.Scopes()
	vs := r.Values(w, settings.BudgetThread, settings.BudgetChannelDay, settings.BudgetScheduleRun)
	get := func(v settings.Value, fallback float64, env string) budget {
		return bindingBudget(r, w, v, budget{usd: fallback, from: env})
	}
	return budgets{
		thread:     get(vs[0], p.cfg.ThreadUSD, envBudgetThread),
		channelDay: get(vs[1], p.cfg.ChannelDayUSD, envBudgetChannel),
		run:        get(vs[2], p.cfg.ScheduleRunUSD, envBudgetSchedule),
	}
}

// any: some budget is set.
func (b budgets) any() bool {
	return b.thread.usd > 0 || b.channelDay.usd > 0 || b.run.usd > 0
}

// note is what `status` and `cost` add after an amount: where a budget
// set in the settings comes from (the configuration's is the default, and
// says nothing).
func (b budget) note() string {
	if !b.set {
		return ""
	}
	return " (" + b.from + ")"
}

// bindingBudget is the budget v (a setting's value at w) gives, else
// fallback (the configuration's).
// A value a channel admin (not a bot admin) set in chat binds only as far
// as it is tighter than what applies without it (settings.Resolver.Wider,
// else fallback): checked when it was set, and held here too, for what is
// wider may have been tightened since, or be the configuration's, which
// the settings may not hold.
func bindingBudget(r *settings.Resolver, w settings.Where, v settings.Value, fallback budget) budget {
	if !v.Set() {
		return fallback
	}
	b := fromValue(v)
	if v.Source.Origin != settings.FromChat || r.IsBotAdmin(v.Source.By) {
		return b
	}
	wider := fallback
	if wv := r.Wider(w, v.Name); wv.Set() {
		wider = fromValue(wv)
	}
	if !settings.Tighter(v.Text, strconv.FormatFloat(wider.usd, 'f', -1, 64)) {
		return wider
	}
	return b
}

// fromValue is the budget a setting gives. The configuration's says its
// variable, as it did before there were settings.
func fromValue(v settings.Value) budget {
	if v.Source.Origin == settings.FromConfig {
		return budget{usd: v.Float(), from: v.Source.Var}
	}
	return budget{usd: v.Float(), from: v.Source.String(), set: true}
}

// PutSettings puts the configuration's budgets (those set) at the bot's
// scope of l, for settings.New: what a channel admin may only tighten.
func (c Config) PutSettings(l *settings.Layer) {
	for _, b := range []struct {
		n   settings.Name
		usd float64
		env string
	}{{settings.BudgetThread, c.ThreadUSD, envBudgetThread}, {settings.BudgetChannelDay, c.ChannelDayUSD, envBudgetChannel}, {settings.BudgetScheduleRun, c.ScheduleRunUSD, envBudgetSchedule}} {
		if b.usd > 0 {
			l.Put(b.n, settings.Value{Text: strconv.FormatFloat(b.usd, 'f', -1, 64),
				Source: settings.Source{Scope: settings.Bot, Origin: settings.FromConfig, Var: b.env}})
		}
	}
}
