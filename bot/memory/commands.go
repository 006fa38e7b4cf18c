package memory

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// Commands implements thread.Commander: `remember`, `memory`, `forget`,
// after `mcp`.
func (e *Extension) Commands() []thread.Command {
	return []thread.Command{
		{Name: "remember", Usage: []string{"remember <fact>"}, Line: true, After: "mcp",
			Help: fmt.Sprintf("store a fact for this channel (at most %d characters, %d facts): every session of the channel is given its facts", store.MaxFactChars, store.MaxFacts),
			Run:  thread.Bind((*part).cmdRemember)},
		{Name: "memory", Usage: []string{"memory", "memory dismiss"}, Help: "this channel's facts, numbered; `dismiss` drops Claude's latest proposal (as its Dismiss button)",
			Max: 1, Claims: func(a []string) bool { return len(a) == 0 || len(a) == 1 && a[0] == "dismiss" }, Run: thread.Bind((*part).cmdMemory)},
		{Name: "forget", Who: thread.Author, Usage: []string{"forget <n>"}, Help: "remove fact n of `memory`",
			Min: 1, Max: 1, Valid: validForget, Claims: claimsForget, Run: thread.Bind((*part).cmdForget)},
	}
}

// claimsForget: `forget`, `forget 3`, `forget #3` are the command (its
// usage, or a fact's number); "forget the old API" is a prompt for Claude.
func claimsForget(args []string) bool {
	return len(args) == 0 || len(args) == 1 && validForget(args)
}

func validForget(args []string) bool {
	n, err := strconv.Atoi(args[0])
	return err == nil && n > 0
}

// cmdRemember stores the rest of the line as a fact of the channel; bare,
// it accepts Claude's latest open proposal (the typed form of its
// Remember button).
func (p *part) cmdRemember(ctx context.Context, ev adapters.Event, args []string) {
	fact := flat(args[0])
	if fact == "" {
		if o := p.latestOffer(); o != nil {
			p.accept(ctx, ev.User, o)
			return
		}
		p.t.Reply(ctx, "Usage: `remember <fact>`.")
		return
	}
	p.store(ctx, ev.User, fact, "remember")
}

// store adds fact for u, if u may, and says so; action names it in the
// audit log.
func (p *part) store(ctx context.Context, u adapters.User, fact, action string) bool {
	if !p.may(ctx, u, Remember, store.Fact{}) {
		p.t.Audit(ctx, u.ID, "refused", action, fact, false)
		p.t.Tell(ctx, u, "You may not add facts to this channel's memory (its memory setting says who may).")
		return false
	}
	f, err := p.ext.facts.AddFact(ctx, store.Fact{ChannelKey: p.key(), Text: fact, By: u.ID, ByName: u.Name, At: p.t.Now()})
	if err != nil {
		p.t.Audit(ctx, u.ID, "refused", action, fact, false)
		p.t.Reply(ctx, "Not remembered: "+why(err)+".")
		return false
	}
	p.t.Audit(ctx, u.ID, action, fmt.Sprintf("fact %d", f.ID), fact, true)
	p.t.Reply(ctx, "Remembered for this channel: "+text.CodeSpan(fact)+
		". Every new session of the channel is given it, and this thread's at its next message (`memory` lists the facts).")
	return true
}

// why is a store error as said to people: its bounds as they are, else
// that it could not be saved (the log has the rest).
func why(err error) string {
	for _, known := range []error{store.ErrTooManyFacts, store.ErrFactTooLong, store.ErrEmptyFact} {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	return "it could not be saved (" + err.Error() + ")"
}

func (p *part) cmdMemory(ctx context.Context, ev adapters.Event, args []string) {
	if len(args) == 1 {
		if o := p.latestOffer(); o != nil {
			p.dismiss(ctx, ev.User, o)
		} else {
			p.t.Reply(ctx, "No proposed fact is open in this thread.")
		}
		return
	}
	fs, err := p.ext.facts.Facts(ctx, p.key())
	if err != nil {
		p.t.Reply(ctx, "Could not read this channel's facts: "+err.Error())
		return
	}
	if len(fs) == 0 {
		p.t.Reply(ctx, "This channel has no facts yet: `remember <fact>` adds one.")
		return
	}
	lines := []string{"Facts of this channel, given to every session:"}
	for i, f := range fs {
		who := f.ByName
		if who == "" {
			who = f.By
		}
		lines = append(lines, fmt.Sprintf("%d. %s — added by %s, %s", i+1, flat(f.Text), who, f.At.Format("2006-01-02")))
	}
	p.t.Reply(ctx, strings.Join(lines, "\n"))
}

// cmdForget removes the n-th fact of `memory`, if the user may.
func (p *part) cmdForget(ctx context.Context, ev adapters.Event, args []string) {
	n, _ := strconv.Atoi(args[0])
	fs, err := p.ext.facts.Facts(ctx, p.key())
	if err != nil {
		p.t.Reply(ctx, "Could not read this channel's facts: "+err.Error())
		return
	}
	if n > len(fs) {
		p.t.Reply(ctx, fmt.Sprintf("This channel has %s (`memory` lists them).", text.Plural(len(fs), "1 fact", fmt.Sprintf("%d facts", len(fs)))))
		return
	}
	f := fs[n-1]
	if !p.may(ctx, ev.User, Forget, f) {
		p.t.Audit(ctx, ev.User.ID, "refused", "forget", f.Text, false)
		p.t.Tell(ctx, ev.User, "You may not forget this fact: its author or an admin of the channel can (the channel's memory setting says who).")
		return
	}
	removed, ok, err := p.ext.facts.RemoveFact(ctx, p.key(), f.ID)
	switch {
	case err != nil:
		p.t.Reply(ctx, "Not forgotten: "+err.Error())
	case !ok:
		p.t.Reply(ctx, "That fact was removed meanwhile (`memory` lists what is left).")
	default:
		p.t.Audit(ctx, ev.User.ID, "forget", fmt.Sprintf("fact %d", removed.ID), removed.Text, true)
		p.t.Reply(ctx, "Forgotten: "+text.CodeSpan(removed.Text)+". New sessions of the channel are not given it, nor this thread's from its next message.")
	}
}
