package limits

import (
	"context"
	"errors"

	"github.com/claudeops/claudeops/bot/thread"
)

// part is the extension's part in one thread: the running process's cap
// and spend, and the turn clock. Its hooks run on the thread's worker.
type part struct {
	cfg Config
	t   thread.Thread

	// cap is the process's --max-budget-usd (when capped); used is what
	// its turns have reported spending since it started.
	cap    budgetCap
	capped bool
	used   float64
	// capTold: the thread was told this process's cap is spent.
	capTold bool

	clock clock
}

var (
	_ thread.PromptGate = (*part)(nil)
	_ thread.Launcher   = (*part)(nil)
	_ thread.TurnEnder  = (*part)(nil)
	_ thread.Watcher    = (*part)(nil)
	_ thread.Receiver   = (*part)(nil)
	_ thread.Statuser   = (*part)(nil)
)

// BeforePrompt refuses a prompt when a budget is spent; otherwise it
// restarts an idle process whose cap went stale (recap).
func (p *part) BeforePrompt(ctx context.Context, _ thread.Prompt) error {
	b := p.budgets()
	if why := p.gate(ctx, b); why != "" {
		return errors.New(why)
	}
	p.recap(ctx, b)
	return nil
}

// BeforeLaunch caps the process about to start at what is left.
func (p *part) BeforeLaunch(ctx context.Context, l *thread.Launch) {
	c, capped := p.processCap(ctx, p.budgets())
	if capped {
		l.ExtraArgs = append(l.ExtraArgs, capArgs(c)...)
	}
	p.cap, p.capped, p.used, p.capTold = c, capped, 0, false
}

// AfterTurn counts the turn's spend, says why a limit stopped it, and
// frees a process whose cap is used up.
func (p *part) AfterTurn(ctx context.Context, e *thread.TurnEnd) {
	p.used += e.Cost
	p.afterSpend(ctx, e.Cost)
	// Told already when the clock stopped it: the CLI may still report
	// the cut turn as over its budget.
	stopped := p.clock.grace
	if stopped == "" && budgetExhausted(e.Result) {
		stopped = p.onBudgetResult(ctx, e.Result)
	}
	if stopped != "" {
		e.Err = errors.New("stopped: " + stopped)
	}
	if budgetExhausted(e.Result) {
		// The process's cap is used up: it would refuse every turn. The
		// next message (once a budget allows it) resumes with a new one.
		e.Release = true
	}
}

// Watch keeps the clock to the thread's state.
func (p *part) Watch(_ context.Context, s thread.State) {
	p.clock.sync(p, s.Turn, s.Prompts > 0)
}

// Receive takes the clock's firings and another thread's spend.
func (p *part) Receive(ctx context.Context, msg any) {
	switch m := msg.(type) {
	case clockFired:
		p.onClock(ctx, m)
	case overBudget:
		p.onChannelOverBudget(ctx)
	}
}

// Status says the budgets: the thread's beside its spend, the channel's
// after it, and for `cost` each scheduled run's.
func (p *part) Status(ctx context.Context, s *thread.Status) {
	b := p.budgets()
	s.ThreadNote += budgetLine(b.thread, s.ThreadSpent)
	if !s.Cost {
		s.Spend = append(s.Spend, p.channelBudgetLines(ctx, b.channelDay)...)
		return
	}
	s.ChannelNote += budgetLine(b.channelDay, s.ChannelSpent)
	if b.run.usd > 0 {
		s.Tail = append(s.Tail, "Each scheduled run: budget "+usd(b.run.usd)+b.run.note())
	}
}

// interruptTurn stops the running turn the way `stop` does: the CLI is
// interrupted (queued messages dropped), open prompts are cancelled
// saying why. A process that does not take the interrupt within the stop
// grace is closed; one that takes it has the stop grace again to end the
// turn (the clock closes it if it does not).
func (p *part) interruptTurn(ctx context.Context, why string) {
	s := p.t.State()
	if !s.Live {
		return
	}
	grace := p.t.Settings().StopGrace
	ictx, cancel := context.WithTimeout(ctx, grace)
	err := p.t.Interrupt(ictx)
	cancel()
	if err != nil {
		p.t.Log().Warn("interrupt did not go through; closing the process", "why", why, "err", err)
		p.t.Stop(why)
		return
	}
	p.t.CancelPrompts(ctx, why)
	p.clock.graceFor(p, s.Turn, why, grace)
}
