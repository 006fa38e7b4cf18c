package scheduled

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
	"github.com/claudeops/claudeops/store"
)

// scheduleForms are the forms of `schedule`; `add`'s options come from
// addOptions, so that help shows every one options reads.
var scheduleForms = []string{`schedule add "<cron spec>" ` + optionsUsage() + `<prompt>`, "schedule list", "schedule runs|run|pause|resume|rm <id>"}

// Commands are the extension's rows of the command table: `schedule`
// and `triggers`, last.
func (e *Extension) Commands() []thread.Command {
	return []thread.Command{
		{Name: "schedule", Who: thread.Creator, Usage: scheduleForms, Help: "recurring prompts posting into this channel; `add`'s options: " + optionsHelp(),
			Line: true, Run: thread.Bind((*part).cmdSchedule)},
		e.triggerCommands(),
	}
}

// cmdSchedule: schedule add "<spec>" <prompt> | list | runs <id> | run <id>
// | pause <id> | resume <id> | rm <id>.
func (p *part) cmdSchedule(ctx context.Context, ev adapters.Event, args []string) {
	sc := p.ext.scheduling()
	if sc == nil {
		p.t.Reply(ctx, "Schedules are not available in this bot.")
		return
	}
	sub, arg := splitWord(args[0])
	switch sub {
	case "add":
		p.add(ctx, ev, sc, arg)
	case "list", "":
		p.list(ctx, sc)
	case "runs", "run", "pause", "resume", "rm":
		id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(arg), "#"), 10, 64)
		if err != nil {
			p.t.Reply(ctx, "Usage: schedule "+sub+" <id>")
			return
		}
		s, found, err := p.t.Store().GetSchedule(ctx, id)
		if err != nil || !found {
			p.t.Reply(ctx, fmt.Sprintf("There is no schedule %d.", id))
			return
		}
		if sub == "runs" {
			p.runs(ctx, s)
			return
		}
		if ev.User.ID != s.CreatedBy && !p.t.IsAdmin(ev.User.ID) {
			p.t.Audit(ctx, ev.User.ID, "refused", "schedule "+sub, strconv.FormatInt(id, 10), false)
			p.t.Tell(ctx, ev.User, "Only the schedule's creator ("+s.CreatedBy+") or an admin can do that.")
			return
		}
		p.change(ctx, ev, sc, sub, s)
	default:
		p.t.Reply(ctx, "Usage: "+strings.Join(scheduleForms, " · "))
	}
}

func (p *part) add(ctx context.Context, ev adapters.Event, sc Scheduling, arg string) {
	spec, prompt, err := quoted(arg)
	if err != nil || strings.TrimSpace(prompt) == "" {
		p.t.Reply(ctx, "Usage: schedule add \"<cron spec>\" <prompt>  (e.g. schedule add \"0 2 * * *\" update the dependencies)")
		return
	}
	ref := p.t.Ref()
	s := store.Schedule{
		Spec: spec, Platform: ref.Platform, Channel: ref.Channel,
		Cwd: p.t.Dir(ctx), Model: p.t.Record().Model, CreatedBy: ev.User.ID, CreatedAt: p.t.Now(),
	}
	if prompt, err = options(&s, prompt); err != nil {
		p.t.Reply(ctx, "Not scheduled: "+err.Error())
		return
	}
	s.Prompt = prompt
	if why := p.pushable(ctx, s); why != "" {
		p.t.Reply(ctx, "Not scheduled: "+why)
		return
	}
	p.ext.adding.Lock()
	if why := p.quota(ctx, ev.User.ID); why != "" {
		p.ext.adding.Unlock()
		p.t.Audit(ctx, ev.User.ID, "refused", "schedule add", why, false)
		p.t.Reply(ctx, "Not scheduled: "+why)
		return
	}
	added, err := sc.Add(ctx, s)
	p.ext.adding.Unlock()
	if err != nil {
		p.t.Reply(ctx, "Not scheduled: "+err.Error())
		return
	}
	next, err := sc.Next(added, 3)
	if err != nil {
		p.t.Log().Error("next runs of a schedule just added", "schedule", added.ID, "err", err)
	}
	p.t.Audit(ctx, ev.User.ID, "schedule add", strconv.FormatInt(added.ID, 10), spec+" "+s.Prompt, true)
	p.t.Reply(ctx, fmt.Sprintf("Schedule %d: `%s` — %s\nNext runs: %s", added.ID, added.Spec, added.Prompt, formatTimes(next)))
}

// pushable says why s's --push or --pr cannot work in this channel ("" if
// they can, or s has neither): both need a repository bound to it, --pr a
// forge for that repository too.
func (p *part) pushable(ctx context.Context, s store.Schedule) string {
	if !s.Push {
		return ""
	}
	opt := "--push"
	if s.PR {
		opt = "--pr"
	}
	repos := p.ext.cfg.Repos
	repo := ""
	if repos != nil {
		repo = repos.Repo(ctx, p.t.Ref().ChannelKey())
	}
	switch {
	case repo == "":
		return opt + " needs a repository bound to this channel (`repo <path or URL>`, admins)."
	case s.PR && !repos.HasForge(repo):
		return "--pr needs a forge for this channel's repository, to open the pull request on: the bot's operator names it in CLAUDEOPS_FORGES (`--push` pushes the branch without one)."
	}
	return ""
}

// quota reports why user may not add another schedule ("" if they may).
// Called with the extension's adding lock held.
func (p *part) quota(ctx context.Context, user string) string {
	limit := p.ext.cfg.MaxPerUser
	if limit <= 0 || p.t.IsAdmin(user) {
		return ""
	}
	all, err := p.t.Store().ListSchedules(ctx)
	if err != nil {
		return "could not count your schedules: " + err.Error()
	}
	n := 0
	for _, s := range all {
		if s.CreatedBy == user {
			n++
		}
	}
	if n >= limit {
		return fmt.Sprintf("you already have %d schedules, the limit per user (CLAUDEOPS_MAX_SCHEDULES_PER_USER=%d). Remove one with schedule rm <id> first.", n, limit)
	}
	return ""
}

func (p *part) list(ctx context.Context, sc Scheduling) {
	all, err := p.t.Store().ListSchedules(ctx)
	if err != nil {
		p.t.Reply(ctx, "Could not read schedules: "+err.Error())
		return
	}
	ref := p.t.Ref()
	var lines []string
	for _, s := range all {
		if s.Platform != ref.Platform || s.Channel != ref.Channel {
			continue
		}
		state := ""
		if s.Paused {
			state = " (paused)"
		} else if next, err := sc.Next(s, 1); err != nil {
			// Stored but not run (e.g. below CLAUDEOPS_SCHEDULE_MIN_INTERVAL).
			state = " (not running: " + err.Error() + ")"
		} else if len(next) > 0 {
			state = " · next " + formatTimes(next)
		}
		switch {
		case s.PR:
			state += " · pushes its branch and opens a pull request"
		case s.Push:
			state += " · pushes its branch"
		}
		lines = append(lines, fmt.Sprintf("%d. `%s` — %s · by %s%s", s.ID, s.Spec, text.Shorten(s.Prompt, 120), s.CreatedBy, state))
	}
	if len(lines) == 0 {
		p.t.Reply(ctx, "No schedules in this channel. Add one with schedule add \"<cron spec>\" <prompt>.")
		return
	}
	p.t.Reply(ctx, "Schedules of this channel:\n"+strings.Join(lines, "\n"))
}

func (p *part) runs(ctx context.Context, s store.Schedule) {
	runs, err := p.t.Store().Runs(ctx, s.ID, 10)
	if err != nil {
		p.t.Reply(ctx, "Could not read runs: "+err.Error())
		return
	}
	if len(runs) == 0 {
		p.t.Reply(ctx, fmt.Sprintf("Schedule %d has not run yet.", s.ID))
		return
	}
	lines := []string{fmt.Sprintf("Runs of schedule %d (newest first):", s.ID)}
	for _, r := range runs {
		lines = append(lines, runLine(r))
	}
	p.t.Reply(ctx, strings.Join(lines, "\n"))
}

// runLine is one run as `schedule runs` shows it.
func runLine(r store.ScheduleRun) string {
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
	if r.PR != "" {
		l += " · pull request " + r.PR
	}
	if r.Error != "" {
		l += " · " + text.Shorten(text.OneLine(r.Error), 120)
	}
	return l
}

func (p *part) change(ctx context.Context, ev adapters.Event, sc Scheduling, sub string, s store.Schedule) {
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
		p.t.Reply(ctx, fmt.Sprintf("Could not %s schedule %d: %v", sub, s.ID, err))
		return
	}
	p.t.Audit(ctx, ev.User.ID, "schedule "+sub, strconv.FormatInt(s.ID, 10), "", true)
	p.t.Reply(ctx, msg)
}

func formatTimes(ts []time.Time) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Format("2006-01-02 15:04:05 MST")
	}
	return strings.Join(parts, ", ")
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
