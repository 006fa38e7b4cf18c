package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/claudeops/claudeops/adapters"
)

// An event the platform cannot vouch for (adapters.Event.Unverified: on
// Matrix, sent in clear in an encrypted room, or from a session its sender
// has not verified) may be talk for Claude, but it decides nothing and runs
// no command: a click, a typed decision, an answer to the open question and
// every command are refused and audited, and the sender is told why once
// per reason in the thread, not for every event.

// refuseUnverified refuses what an unverified event may not do, and
// reports whether it did (the event is then handled).
func (w *worker) refuseUnverified(ctx context.Context, ev adapters.Event) bool {
	if ev.Unverified == "" {
		return false
	}
	var what, target string
	switch {
	case ev.Click != nil && ev.Click.Choice == adapters.ChoiceStop:
		what, target = "Stop", "stop"
	case ev.Click != nil:
		what, target = "reaction or vote", ev.Click.PromptID
	case ev.Message != nil:
		text := strings.TrimSpace(ev.Message.Text)
		if c, _ := findCommand(w.b.commands, text); c != nil {
			what, target = "command", c.Name
		} else if w.desk.wouldTake(ev.User, w.thread.StartedBy, text) {
			what, target = "reply", "decision"
		} else {
			return false // talk: Claude is told who speaks, as for anyone
		}
	default:
		return false
	}
	w.audit(ctx, ev.User.ID, "refused", target, "unverified: "+ev.Unverified, false)
	key := ev.User.ID + "\x00" + ev.Unverified
	if w.toldUnverified[key] {
		return true
	}
	if w.toldUnverified == nil {
		w.toldUnverified = make(map[string]bool)
	}
	w.toldUnverified[key] = true
	w.tell(ctx, ev.User, fmt.Sprintf("Your %s did not count: %s. In an end-to-end encrypted room, decisions and commands "+
		"count only when sent encrypted from a session you have verified (in Element: verify this session with another "+
		"one or your recovery key). (Said once: the same again here is refused without a word.)", what, ev.Unverified))
	return true
}

// wouldTake reports whether typed would take text from user as a decision
// or an answer, without taking it.
func (k *desk) wouldTake(user adapters.User, starter, text string) bool {
	if _, ok := parseTypedReply(text); ok {
		return true
	}
	open := k.openPrompts()
	return len(open) == 1 && open[0].prompt.Kind == adapters.PromptQuestion && k.mayDecide(user.ID, starter)
}
