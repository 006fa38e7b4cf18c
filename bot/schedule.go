package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/claudeproc"
	"github.com/claudeops/claudeops/store"
)

// Scheduling is what the chat commands need of the scheduler:
// *scheduler.Scheduler satisfies it, and cmd passes it in (bot does not
// import scheduler: the scheduler calls the bot).
type Scheduling interface {
	// Add validates and stores a schedule and starts running it; it
	// returns the stored schedule.
	Add(ctx context.Context, s store.Schedule) (store.Schedule, error)
	SetPaused(ctx context.Context, id int64, paused bool) error
	Remove(ctx context.Context, id int64) error
	RunNow(ctx context.Context, id int64) (time.Time, error)
	// Next returns a schedule's next n run times.
	Next(s store.Schedule, n int) ([]time.Time, error)
}

// SetScheduler connects the schedule commands to the scheduler.
func (b *Bot) SetScheduler(s Scheduling) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sched = s
}

func (b *Bot) scheduling() Scheduling {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sched
}

// scheduledRun rides on a worker input: the run's schedule, and where the
// worker reports the end of the run's turn.
type scheduledRun struct {
	schedule store.Schedule
	slot     time.Time
	// deadline is when the run's time is up (zero: no deadline); a parked
	// request is denied by then at the latest.
	deadline time.Time
	done     chan runOutcome
}

type runOutcome struct {
	res store.ScheduleRun
	err error
}

// ErrNoOpener: the target platform cannot start a thread by itself.
var ErrNoOpener = errors.New("the target platform cannot open a thread")

// RunScheduled runs one scheduled prompt: it opens a thread in the target
// channel, runs the prompt in a fresh session there (unattended approvals
// follow the schedule's policy), and returns when the turn ends or ctx does
// (the turn is then stopped). People can reply in the thread afterwards.
// Of the run it fills in what the bot knows (session, thread, result,
// cost, tokens, turns): it is the scheduler's Runner.
func (b *Bot) RunScheduled(ctx context.Context, s store.Schedule, slot time.Time) (store.ScheduleRun, error) {
	ad := b.adapter(s.Platform)
	op, ok := ad.(adapters.Opener)
	if !ok {
		return store.ScheduleRun{}, fmt.Errorf("schedule %d: %w (%s)", s.ID, ErrNoOpener, s.Platform)
	}
	head := fmt.Sprintf("⏰ Scheduled run of #%d (`%s`, slot %s): %s", s.ID, s.Spec, slot.UTC().Format(time.RFC3339), s.Prompt)
	t, err := op.OpenThread(ctx, s.Channel, adapters.Message{Kind: adapters.KindNotice, Text: head})
	if err != nil {
		return store.ScheduleRun{}, fmt.Errorf("schedule %d: open thread: %w", s.ID, err)
	}
	run := &scheduledRun{schedule: s, slot: slot, done: make(chan runOutcome, 1)}
	run.deadline, _ = ctx.Deadline()
	if !b.toWorker(t.Key(), input{kind: inScheduled, ev: adapters.Event{Thread: t}, run: run}) {
		return store.ScheduleRun{ThreadKey: string(t.Key())}, fmt.Errorf("schedule %d: the bot is busy or shutting down", s.ID)
	}
	select {
	case out := <-run.done:
		out.res.ThreadKey = string(t.Key())
		return out.res, out.err
	case <-ctx.Done():
		b.toWorker(t.Key(), input{kind: inStopRun})
		return store.ScheduleRun{ThreadKey: string(t.Key())}, ctx.Err()
	}
}

// startScheduled begins a scheduled run in this (new) thread.
func (w *worker) startScheduled(ctx context.Context, run *scheduledRun) {
	s := run.schedule
	w.schedRun = run
	p := thread.Prompt{Text: s.Prompt, User: adapters.User{ID: s.CreatedBy}, Auto: "scheduler", Header: scheduleHeader(s.ID, s.CreatedBy)}
	var refused *thread.Refused
	switch err := w.face.BeginRun(ctx, thread.Run{Schedule: s, Slot: run.slot}, p); {
	case errors.As(err, &refused):
		w.finishRun(runOutcome{err: errors.New("not run: " + refused.Why)})
	case err != nil:
		// Not sent (the notice says why).
		w.finishRun(runOutcome{err: err})
	}
}

// stopRun: the scheduled run's time is up; its turn is interrupted.
func (w *worker) stopRun(ctx context.Context) {
	if w.schedRun != nil && w.sess.live() && w.view.running() {
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := w.sess.proc.Interrupt(ictx, true); err != nil {
			w.log.Warn("interrupt scheduled run", "err", err)
		}
		cancel()
		w.notice(ctx, "This scheduled run took longer than its timeout and was stopped.", true)
	}
	w.finishRun(runOutcome{err: context.DeadlineExceeded})
}

// resultOutcome is what the result r of a scheduled run's turn reports.
func resultOutcome(r *claudeproc.Result, cost float64) runOutcome {
	in, tokensOut := turnTokens(r)
	out := runOutcome{res: store.ScheduleRun{SessionID: r.SessionID, Result: r.Result, CostUSD: cost,
		InputTokens: in, OutputTokens: tokensOut, NumTurns: r.NumTurns}}
	if r.IsError {
		msg := strings.Join(r.Errors, "; ")
		if msg == "" {
			msg = r.Result
		}
		out.err = fmt.Errorf("%s: %s", r.Subtype, msg)
	}
	return out
}

// finishRun reports the scheduled run's end, once.
func (w *worker) finishRun(out runOutcome) {
	if w.schedRun == nil {
		return
	}
	w.schedRun.done <- out
	w.schedRun = nil
	w.face.EndRun()
}

// unattended: a scheduled run whose approvals nobody is asked for.
func (w *worker) unattended() bool {
	return w.schedRun != nil && w.schedRun.schedule.ApprovalPolicy != "park"
}

// schedule commands: schedule add "<spec>" <prompt> | list | runs <id> |
// run <id> | pause <id> | resume <id> | rm <id>.
func (w *worker) cmdSchedule(ctx context.Context, ev adapters.Event, args []string) {
	rest := args[0]
	sc := w.b.scheduling()
	if sc == nil {
		w.reply(ctx, "Schedules are not available in this bot.")
		return
	}
	sub, arg := splitWord(rest)
	switch sub {
	case "add":
		w.scheduleAdd(ctx, ev, sc, arg)
	case "list", "":
		w.scheduleList(ctx)
	case "runs", "run", "pause", "resume", "rm":
		id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(arg), "#"), 10, 64)
		if err != nil {
			w.reply(ctx, "Usage: schedule "+sub+" <id>")
			return
		}
		s, found, err := w.store.GetSchedule(ctx, id)
		if err != nil || !found {
			w.reply(ctx, fmt.Sprintf("There is no schedule %d.", id))
			return
		}
		if sub == "runs" {
			w.scheduleRuns(ctx, s)
			return
		}
		if ev.User.ID != s.CreatedBy && !w.isAdmin(ev.User.ID) {
			w.audit(ctx, ev.User.ID, "refused", "schedule "+sub, strconv.FormatInt(id, 10), false)
			w.tell(ctx, ev.User, "Only the schedule's creator ("+s.CreatedBy+") or an admin can do that.")
			return
		}
		w.scheduleChange(ctx, ev, sc, sub, s)
	default:
		w.reply(ctx, "Usage: "+strings.Join(scheduleForms, " · "))
	}
}

func (w *worker) scheduleAdd(ctx context.Context, ev adapters.Event, sc Scheduling, arg string) {
	spec, prompt, err := quoted(arg)
	if err != nil || strings.TrimSpace(prompt) == "" {
		w.reply(ctx, "Usage: schedule add \"<cron spec>\" <prompt>  (e.g. schedule add \"0 2 * * *\" update the dependencies)")
		return
	}
	s := store.Schedule{
		Spec: spec, Platform: w.ref.Platform, Channel: w.ref.Channel,
		Cwd: w.cwd(ctx), Model: w.thread.Model, CreatedBy: ev.User.ID, CreatedAt: w.now(),
	}
	if prompt, err = scheduleOptions(&s, prompt); err != nil {
		w.reply(ctx, "Not scheduled: "+err.Error())
		return
	}
	s.Prompt = prompt
	if s.Push && w.repo(ctx) == "" {
		w.reply(ctx, "Not scheduled: --push needs a repository bound to this channel (`repo <path or URL>`, admins).")
		return
	}
	scheduleAddMu.Lock()
	if why := w.scheduleQuota(ctx, ev.User.ID); why != "" {
		scheduleAddMu.Unlock()
		w.audit(ctx, ev.User.ID, "refused", "schedule add", why, false)
		w.reply(ctx, "Not scheduled: "+why)
		return
	}
	added, err := sc.Add(ctx, s)
	scheduleAddMu.Unlock()
	if err != nil {
		w.reply(ctx, "Not scheduled: "+err.Error())
		return
	}
	next, err := sc.Next(added, 3)
	if err != nil {
		w.log.Error("next runs of a schedule just added", "schedule", added.ID, "err", err)
	}
	w.audit(ctx, ev.User.ID, "schedule add", strconv.FormatInt(added.ID, 10), spec+" "+s.Prompt, true)
	w.reply(ctx, fmt.Sprintf("Schedule %d: `%s` — %s\nNext runs: %s", added.ID, added.Spec, added.Prompt, formatTimes(next)))
}

func (w *worker) scheduleList(ctx context.Context) {
	all, err := w.store.ListSchedules(ctx)
	if err != nil {
		w.reply(ctx, "Could not read schedules: "+err.Error())
		return
	}
	var lines []string
	for _, s := range all {
		if s.Platform != w.ref.Platform || s.Channel != w.ref.Channel {
			continue
		}
		state := ""
		if s.Paused {
			state = " (paused)"
		} else if next, err := w.b.scheduling().Next(s, 1); err != nil {
			// Stored but not run (e.g. below CLAUDEOPS_SCHEDULE_MIN_INTERVAL).
			state = " (not running: " + err.Error() + ")"
		} else if len(next) > 0 {
			state = " · next " + formatTimes(next)
		}
		if s.Push {
			state += " · pushes its branch"
		}
		lines = append(lines, fmt.Sprintf("%d. `%s` — %s · by %s%s", s.ID, s.Spec, shorten(s.Prompt, 120), s.CreatedBy, state))
	}
	if len(lines) == 0 {
		w.reply(ctx, "No schedules in this channel. Add one with schedule add \"<cron spec>\" <prompt>.")
		return
	}
	w.reply(ctx, "Schedules of this channel:\n"+strings.Join(lines, "\n"))
}

func (w *worker) scheduleRuns(ctx context.Context, s store.Schedule) {
	runs, err := w.store.Runs(ctx, s.ID, 10)
	if err != nil {
		w.reply(ctx, "Could not read runs: "+err.Error())
		return
	}
	if len(runs) == 0 {
		w.reply(ctx, fmt.Sprintf("Schedule %d has not run yet.", s.ID))
		return
	}
	lines := []string{fmt.Sprintf("Runs of schedule %d (newest first):", s.ID)}
	for _, r := range runs {
		l := fmt.Sprintf("%s · %s", r.Slot.UTC().Format("2006-01-02 15:04:05Z"), r.Status)
		if r.Missed > 1 {
			l += fmt.Sprintf(" (%d slots)", r.Missed)
		}
		if !r.EndedAt.IsZero() && !r.StartedAt.IsZero() {
			l += " · " + adapters.FormatDuration(r.EndedAt.Sub(r.StartedAt))
		}
		if r.CostUSD > 0 {
			l += fmt.Sprintf(" · $%.4f", r.CostUSD)
		}
		if r.ThreadKey != "" {
			l += " · thread " + r.ThreadKey
		}
		if r.Branch != "" {
			l += " · branch `" + r.Branch + "`"
			if r.Commit != "" {
				l += " at " + text.ShortCommit(r.Commit)
			}
		}
		if r.Error != "" {
			l += " · " + shorten(oneLine(r.Error), 120)
		}
		lines = append(lines, l)
	}
	w.reply(ctx, strings.Join(lines, "\n"))
}

func (w *worker) scheduleChange(ctx context.Context, ev adapters.Event, sc Scheduling, sub string, s store.Schedule) {
	var err error
	var msg string
	switch sub {
	case "run":
		var slot time.Time
		slot, err = sc.RunNow(ctx, s.ID)
		msg = fmt.Sprintf("Schedule %d runs now (slot %s).", s.ID, slot.UTC().Format(time.RFC3339))
	case "pause":
		err = sc.SetPaused(ctx, s.ID, true)
		msg = fmt.Sprintf("Schedule %d paused.", s.ID)
	case "resume":
		err = sc.SetPaused(ctx, s.ID, false)
		msg = fmt.Sprintf("Schedule %d resumed.", s.ID)
	case "rm":
		err = sc.Remove(ctx, s.ID)
		msg = fmt.Sprintf("Schedule %d removed.", s.ID)
	}
	if err != nil {
		w.reply(ctx, fmt.Sprintf("Could not %s schedule %d: %v", sub, s.ID, err))
		return
	}
	w.audit(ctx, ev.User.ID, "schedule "+sub, strconv.FormatInt(s.ID, 10), "", true)
	w.reply(ctx, msg)
}

// repo is the repository the thread's channel is bound to, as the
// extension that binds channels says ("" for none).
func (w *worker) repo(ctx context.Context) string {
	for _, e := range w.b.cfg.Extensions {
		if r, ok := e.(interface {
			Repo(ctx context.Context, channel string) string
		}); ok {
			return r.Repo(ctx, w.ref.ChannelKey())
		}
	}
	return ""
}

// scheduleOptions reads the options that may come before the prompt:
// --park (ask the creator and admins instead of denying unattended
// requests), --queue (run overlapping slots after the current one instead
// of skipping them), --push (commit and push the run's branch when it
// changed files), --timeout <duration>, --catch-up <duration>.
func scheduleOptions(s *store.Schedule, rest string) (string, error) {
	rest = strings.TrimSpace(rest)
	for strings.HasPrefix(rest, "--") {
		opt, tail := splitWord(rest)
		switch opt {
		case "--park":
			s.ApprovalPolicy = "park"
		case "--queue":
			s.Overlap = "queue"
		case "--push":
			s.Push = true
		case "--timeout", "--catch-up":
			val, after := splitWord(tail)
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return "", fmt.Errorf("%s wants a duration such as 45m, not %q", opt, val)
			}
			if opt == "--timeout" {
				s.Timeout = d
			} else {
				s.CatchUp = d
			}
			tail = after
		default:
			return "", fmt.Errorf("unknown option %s (options: --park, --queue, --push, --timeout <d>, --catch-up <d>)", opt)
		}
		rest = strings.TrimSpace(tail)
	}
	if rest == "" {
		return "", errors.New("the prompt is missing")
	}
	return rest, nil
}

func formatTimes(ts []time.Time) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Format("2006-01-02 15:04:05 MST")
	}
	return strings.Join(parts, ", ")
}

// cutWord: text starts with word (any case) followed by a space or the end.
func cutWord(text, word string) (string, bool) {
	if len(text) < len(word) || !strings.EqualFold(text[:len(word)], word) {
		return "", false
	}
	rest := text[len(word):]
	if rest != "" && rest[0] != ' ' {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

func splitWord(s string) (string, string) {
	s = strings.TrimSpace(s)
	w, rest, _ := strings.Cut(s, " ")
	return strings.ToLower(w), strings.TrimSpace(rest)
}

// quoted splits `"<spec>" rest` (straight or curly quotes, as chat clients
// turn them).
func quoted(s string) (string, string, error) {
	s = strings.TrimSpace(s)
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}} {
		if strings.HasPrefix(s, q[0]) {
			body := s[len(q[0]):]
			i := strings.Index(body, q[1])
			if i < 0 {
				return "", "", errors.New("unclosed quote")
			}
			return body[:i], body[i+len(q[1]):], nil
		}
	}
	return "", "", errors.New("the cron spec must be quoted")
}
