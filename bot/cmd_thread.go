package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// The commands about the thread's session: status, stop, new, mode,
// model, cost.

func (w *worker) cmdStatus(ctx context.Context, ev adapters.Event, _ []string) {
	state := "no session yet"
	switch {
	case w.view.turn != nil:
		state = fmt.Sprintf("running a turn (%s)", adapters.FormatDuration(w.now().Sub(w.view.turn.started)))
	case w.sess.proc != nil:
		state = "idle, session live"
	case w.thread.SessionID != "":
		state = "idle, session stopped (resumes on your next message)"
	}
	start := launchFor(w.cfg.Scopes, w.ref, w.thread)
	u, err := w.store.ThreadUsage(ctx, string(w.key))
	if err != nil {
		w.log.Error("thread usage", "err", err)
	}
	st := &thread.Status{Admin: w.isAdmin(ev.User.ID), ThreadSpent: u.CostUSD}
	each(w.parts, func(p thread.Statuser) { p.Status(ctx, st) })
	lines := []string{
		"State: " + state,
		"Model: " + start.model.shown() + " · Mode: " + start.mode.shown() + start.effortShown(),
		fmt.Sprintf("Queued messages: %d · Open approvals: %d", len(w.queued), len(w.desk.pending())),
		fmt.Sprintf("Cost so far: $%.4f over %s", u.CostUSD, turnsText(u)) + st.ThreadNote,
	}
	lines = append(lines, st.Spend...)
	lines = append(lines,
		fmt.Sprintf("Live sessions: %d of %d · threads waiting: %d", w.slots.live(), w.cfg.MaxSessions, w.slots.queued()))
	if w.thread.SessionID != "" {
		lines = append(lines, "Session: "+w.thread.SessionID)
	}
	lines = append(lines, st.Tail...)
	w.reply(ctx, strings.Join(lines, "\n"))
}

func (w *worker) cmdStop(ctx context.Context, ev adapters.Event, _ []string) {
	if w.sess.proc == nil || (w.view.turn == nil && len(w.queued) == 0) {
		w.reply(ctx, "Nothing is running.")
		return
	}
	// Said at once, as the stop is accepted: the CLI's confirmation is a
	// round trip away. The notice is corrected if the interrupt fails, or
	// says what it dropped; the turn's footer says it stopped.
	said := w.notice(ctx, "Stopping.", false)
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := w.sess.proc.Interrupt(ictx, true)
	if err != nil {
		w.log.Warn("interrupt", "err", err)
		w.correct(ctx, said, "Could not stop the turn: "+err.Error(), true)
		return
	}
	// Pending approvals are cancelled by the CLI (control_cancel_request);
	// close any it did not name.
	w.cancelPrompts(ctx, "stopped by "+ev.User.ID)
	w.slash.drop(ctx, w.records.settle)
	w.audit(ctx, ev.User.ID, "stop", "turn", "", true)
	if n := len(res.Cancelled); n > 0 {
		w.correct(ctx, said, fmt.Sprintf("Stopping; %d queued %s dropped.", n, text.Plural(n, "message", "messages")), false)
	}
}

// correct replaces a notice the bot posted (ref) with what turned out,
// at once (a final state: never paced, never dropped).
func (w *worker) correct(ctx context.Context, ref adapters.MessageRef, text string, isErr bool) {
	if w.ad == nil {
		return
	}
	if ref.ID == "" { // the first notice was not posted
		w.notice(ctx, text, isErr)
		return
	}
	m := adapters.Message{Kind: adapters.KindNotice, Text: text, Error: isErr, Final: true}
	if err := w.ad.Edit(ctx, ref, m); err != nil {
		w.log.Warn("edit notice", "err", err)
	}
}

func (w *worker) cmdNew(ctx context.Context, ev adapters.Event, _ []string) {
	w.stop("a new session was requested")
	w.removeHome(ctx) // what the ended session's CLI kept goes with it
	w.thread.SessionID = ""
	w.thread.State = "new"
	w.saveThread(ctx)
	w.audit(ctx, ev.User.ID, "new", "session", "", true)
	w.reply(ctx, "Session ended. Your next message starts a fresh conversation.")
	each(w.parts, func(p thread.Ender) { p.OnEnd(ctx) })
}

func (w *worker) cmdMode(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 0 {
		m := w.thread.Mode
		if m == "" {
			m = "default"
		}
		w.reply(ctx, "Mode: "+m+" (one of "+strings.Join(validModes, ", ")+")")
		return
	}
	mode := args[0]
	if !validMode(mode) {
		w.reply(ctx, "Unknown mode "+mode+"; use one of "+strings.Join(validModes, ", ")+".")
		return
	}
	if w.sess.proc != nil {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := w.sess.proc.SetPermissionMode(cctx, cliMode(mode)); err != nil {
			w.reply(ctx, "Could not switch the mode: "+err.Error())
			return
		}
	}
	w.thread.Mode = mode
	w.saveThread(ctx)
	w.audit(ctx, ev.User.ID, "mode", mode, "", true)
	w.reply(ctx, "Mode: "+mode+".")
}

func (w *worker) cmdModel(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 0 {
		m := w.thread.Model
		if m == "" {
			m = "default"
		}
		w.reply(ctx, "Model: "+m)
		return
	}
	model := args[0]
	got := model
	if w.sess.proc != nil {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		var err error
		if got, err = w.sess.proc.SetModel(cctx, model); err != nil {
			w.reply(ctx, "Could not switch the model: "+err.Error())
			return
		}
	}
	if model == "default" {
		w.thread.Model = ""
	} else {
		w.thread.Model = model
	}
	w.saveThread(ctx)
	w.audit(ctx, ev.User.ID, "model", model, "", true)
	w.reply(ctx, "Model: "+got+".")
}

func (w *worker) cmdCost(ctx context.Context, ev adapters.Event, _ []string) {
	u, err := w.store.ThreadUsage(ctx, string(w.key))
	if err != nil {
		w.reply(ctx, "Could not read usage: "+err.Error())
		return
	}
	now := w.now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	c, err := w.store.ChannelUsageSince(ctx, w.ref.ChannelKey(), day)
	if err != nil {
		w.reply(ctx, "Could not read usage: "+err.Error())
		return
	}
	st := &thread.Status{Cost: true, Admin: w.isAdmin(ev.User.ID), ThreadSpent: u.CostUSD, ChannelSpent: c.CostUSD}
	each(w.parts, func(p thread.Statuser) { p.Status(ctx, st) })
	text := fmt.Sprintf("This thread: $%.4f · %s · %d input / %d output tokens%s\nThis channel today (UTC): $%.4f · %s%s",
		u.CostUSD, turnsText(u), u.InputTokens, u.OutputTokens, st.ThreadNote, c.CostUSD, turnsText(c), st.ChannelNote)
	for _, l := range st.Tail {
		text += "\n" + l
	}
	w.reply(ctx, text)
}

// turnsText counts u's turns for status and cost, saying how many of
// them a restart left without a recorded end (their cost is not known).
func turnsText(u store.Usage) string {
	s := fmt.Sprintf("%d %s", u.Turns, text.Plural(u.Turns, "turn", "turns"))
	if u.Interrupted > 0 {
		s += fmt.Sprintf(" (%d whose end a restart of the bot left unrecorded, cost unknown)", u.Interrupted)
	}
	return s
}
