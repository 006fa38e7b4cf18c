package limits

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/claudeops/claudeops/claudeproc"
)

// budgetKind names a budget.
type budgetKind int

const (
	budgetNone budgetKind = iota
	budgetThread
	budgetChannel
	budgetRun
)

// budgetExhausted: the CLI ended the turn at its --max-budget-usd.
func budgetExhausted(r *claudeproc.Result) bool {
	return r.Subtype == "error_max_budget_usd" || r.TerminalReason == "budget_exhausted"
}

// spendNow is what the thread and its channel (today, UTC) have spent.
type spendNow struct{ thread, channelDay float64 }

func (p *part) spendNow(ctx context.Context, b budgets) (spendNow, error) {
	var s spendNow
	ref, st := p.t.Ref(), p.t.Store()
	if b.thread.usd > 0 {
		u, err := st.ThreadUsage(ctx, string(ref.Key()))
		if err != nil {
			return s, err
		}
		s.thread = u.CostUSD
	}
	if b.channelDay.usd > 0 {
		u, err := st.ChannelUsageSince(ctx, ref.ChannelKey(), dayStart(p.t.Now()))
		if err != nil {
			return s, err
		}
		s.channelDay = u.CostUSD
	}
	return s, nil
}

// overBudget is the budget that s has reached: the thread's, else the
// channel's; budgetNone when neither.
func (b budgets) overBudget(s spendNow) budgetKind {
	switch {
	case b.thread.usd > 0 && s.thread >= b.thread.usd:
		return budgetThread
	case b.channelDay.usd > 0 && s.channelDay >= b.channelDay.usd:
		return budgetChannel
	}
	return budgetNone
}

// spentText says which budget is spent, how much, and what gave it.
func (b budgets) spentText(k budgetKind, s spendNow, run float64) string {
	switch k {
	case budgetThread:
		return fmt.Sprintf("this thread's budget is spent: %s of %s (%s)", spent(s.thread), usd(b.thread.usd), b.thread.from)
	case budgetChannel:
		return fmt.Sprintf("this channel's budget for today is spent: %s of %s (%s); it renews at 00:00 UTC", spent(s.channelDay), usd(b.channelDay.usd), b.channelDay.from)
	case budgetRun:
		return fmt.Sprintf("this scheduled run's budget is spent: %s of %s (%s)", spent(run), usd(b.run.usd), b.run.from)
	}
	return "a budget is spent"
}

// gate says why a prompt is refused when the thread or its channel has
// spent its budget ("" when not). A spend that cannot be read refuses
// too: a budget nobody can check is not kept.
func (p *part) gate(ctx context.Context, c budgets) string {
	if c.thread.usd <= 0 && c.channelDay.usd <= 0 {
		return ""
	}
	s, err := p.spendNow(ctx, c)
	switch {
	case err != nil:
		p.t.Log().Error("read spend for the budget check", "err", err)
		return "the spend of this thread could not be read to check its budget"
	case c.overBudget(s) != budgetNone:
		return c.spentText(c.overBudget(s), s, 0)
	}
	return ""
}

// budgetCap is a process's --max-budget-usd, and the budget it comes from.
type budgetCap struct {
	usd  float64
	kind budgetKind
}

// processCap is the cap of a process starting now: what is left of the
// tightest budget that applies. ok is false when none applies. A spend
// that cannot be read leaves the whole budget as the cap.
func (p *part) processCap(ctx context.Context, b budgets) (c budgetCap, ok bool) {
	s, err := p.spendNow(ctx, b)
	if err != nil {
		p.t.Log().Error("read spend for the session's budget cap", "err", err)
	}
	take := func(budget, used float64, k budgetKind) {
		if budget <= 0 {
			return
		}
		if left := budget - used; !ok || left < c.usd {
			c, ok = budgetCap{usd: left, kind: k}, true
		}
	}
	take(b.thread.usd, s.thread, budgetThread)
	take(b.channelDay.usd, s.channelDay, budgetChannel)
	if _, run := p.t.Run(); run {
		take(b.run.usd, 0, budgetRun)
	}
	return c, ok
}

// capArgs are the CLI arguments for cap: the amount rounded down to a
// millionth of a dollar, at least that (the gate refused a spent budget
// already; the CLI takes no 0).
func capArgs(c budgetCap) []string {
	v := math.Max(math.Floor(c.usd*1e6)/1e6, 1e-6)
	return []string{"--max-budget-usd", strconv.FormatFloat(v, 'f', -1, 64)}
}

// recap restarts an idle live process whose cap no longer matches what is
// left of its budgets (another thread of the channel spent, the day
// turned), so that the next turn runs under the right one. The session
// resumes: nothing of the conversation is lost. A budget changed in the
// settings is the same case: the next turn runs under the new one.
func (p *part) recap(ctx context.Context, b budgets) {
	if s := p.t.State(); !s.Live || !(p.capped || b.any()) || s.Busy() {
		return
	}
	want, ok := p.processCap(ctx, b)
	left := p.cap.usd - p.used
	if ok == p.capped && (!ok || math.Abs(want.usd-left) < 1e-6) {
		return
	}
	p.t.Log().Info("budget left changed since the session started; restarting it with the new cap", "cap", want.usd, "left", left)
	p.t.Stop("")
}

// onBudgetResult: the CLI ended the turn at its cap. It says which budget
// is spent (once per process) and returns why.
func (p *part) onBudgetResult(ctx context.Context, r *claudeproc.Result) string {
	b := p.budgets()
	s, err := p.spendNow(ctx, b)
	if err != nil {
		p.t.Log().Error("read spend after a budget stop", "err", err)
	}
	k := b.overBudget(s)
	if k == budgetNone {
		// The cap was the run's, or it was what another thread had left
		// of the channel's.
		k = p.cap.kind
	}
	why := b.spentText(k, s, r.TotalCostUSD)
	if !p.capTold {
		// Once per process: a message queued behind the turn that spent
		// the cap is refused by the CLI the same way, at no cost.
		p.capTold = true
		p.t.Notice(ctx, "Stopped: "+why+".", true)
		p.t.Audit(ctx, "bot", "stop", "turn", why, true)
	}
	return why
}

// overBudget tells another thread's part that its channel's budget is
// spent (thread.Host.PostChannel).
type overBudget struct{}

// afterSpend runs once a turn's cost is stored: when the channel is over
// its budget now, its other running turns are stopped.
func (p *part) afterSpend(ctx context.Context, cost float64) {
	b := p.budgets()
	if cost <= 0 || b.channelDay.usd <= 0 {
		return
	}
	s, err := p.spendNow(ctx, b)
	if err != nil || s.channelDay < b.channelDay.usd {
		return
	}
	ref := p.t.Ref()
	p.t.PostChannel(ref.ChannelKey(), ref.Key(), overBudget{})
}

// onChannelOverBudget: another thread's turn spent the channel's budget.
// A turn running here is stopped (after checking: the day may have turned).
func (p *part) onChannelOverBudget(ctx context.Context) {
	if s := p.t.State(); s.Turn == 0 || !s.Live || p.clock.grace != "" {
		return
	}
	b := p.budgets()
	s, err := p.spendNow(ctx, b)
	if err != nil || b.channelDay.usd <= 0 || s.channelDay < b.channelDay.usd {
		return
	}
	why := b.spentText(budgetChannel, s, 0)
	p.t.Notice(ctx, "Stopped: "+why+".", true)
	p.t.Audit(ctx, "bot", "stop", "turn", why, true)
	p.interruptTurn(ctx, why)
}

// budgetLine is what status and cost say of a budget: "" when none is set.
func budgetLine(b budget, used float64) string {
	if b.usd <= 0 {
		return ""
	}
	if used >= b.usd {
		return fmt.Sprintf(" · budget %s%s: spent", usd(b.usd), b.note())
	}
	return fmt.Sprintf(" · budget %s%s: %s left", usd(b.usd), b.note(), spent(b.usd-used))
}

// channelBudgetLines are status's lines about the channel's budget: its
// spend today against it, when one is set.
func (p *part) channelBudgetLines(ctx context.Context, b budget) []string {
	if b.usd <= 0 {
		return nil
	}
	c, err := p.t.Store().ChannelUsageSince(ctx, p.t.Ref().ChannelKey(), dayStart(p.t.Now()))
	if err != nil {
		p.t.Log().Error("channel usage", "err", err)
		return []string{"This channel today (UTC): spend unknown (" + err.Error() + ")"}
	}
	return []string{fmt.Sprintf("This channel today (UTC): %s", spent(c.CostUSD)) + budgetLine(b, c.CostUSD)}
}
