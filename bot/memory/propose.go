package memory

import (
	"context"
	"fmt"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
)

// maxOffers bounds the proposals a thread shows at once: Claude cannot
// flood it; more are dropped (logged) until people decide.
const maxOffers = 5

// offer is a proposal of Claude's the thread shows.
type offer struct {
	id, fact string
	seq      int
	ref      adapters.MessageRef
}

// The choices of a proposal: the approval controls each platform has,
// labelled for it.
var offerChoices = []adapters.Choice{
	{ID: adapters.ChoiceAllow, Label: "Remember", Typed: "remember"},
	{ID: adapters.ChoiceDeny, Label: "Dismiss", Typed: "memory dismiss"},
}

// Propose implements thread.Proposer: the fact is shown with Remember and
// Dismiss; nothing is stored. Where the channel's memory is off, nobody
// could accept it: it is not shown.
func (p *part) Propose(ctx context.Context, pr thread.Proposal) {
	fact := flat(pr.Text)
	if fact == "" {
		return
	}
	if p.t.Scopes().Get(thread.Where(p.t.Ref()), settings.Memory).Text == "off" {
		p.t.Log().Info("a proposed fact was dropped: the channel's memory is off")
		return
	}
	if len(p.offers) >= maxOffers {
		p.t.Log().Warn("a proposed fact was dropped: too many wait", "open", len(p.offers))
		return
	}
	p.seq++
	o := &offer{id: fmt.Sprintf("fact-%s-%d-%d", p.t.Ref().Thread, p.t.Now().UnixNano(), p.seq), fact: fact, seq: p.seq}
	ref, err := p.t.Offer(ctx, o.prompt(adapters.PromptPending, ""))
	if err != nil {
		p.t.Log().Error("show a proposed fact", "err", err)
		return
	}
	o.ref = ref
	p.offers[o.id] = o
}

// prompt is how the thread shows o.
func (o *offer) prompt(state adapters.PromptState, outcome string) adapters.Prompt {
	return adapters.Prompt{
		ID: o.id, Kind: adapters.PromptApproval,
		Title: "Claude proposes a fact for this channel to remember", Tool: "remember", Detail: o.fact,
		Note:    "Nothing is stored unless someone who may add facts to the channel's memory chooses **Remember**.",
		Choices: offerChoices, State: state, Outcome: outcome,
	}
}

// Click implements thread.Clicker: Remember stores the fact as the
// clicker's, if they may; Dismiss drops it.
func (p *part) Click(ctx context.Context, u adapters.User, c adapters.Click) bool {
	o, ok := p.offers[c.PromptID]
	if !ok {
		return false
	}
	switch c.Choice {
	case adapters.ChoiceAllow:
		p.accept(ctx, u, o)
	case adapters.ChoiceDeny:
		p.dismiss(ctx, u, o)
	default:
		p.t.Audit(ctx, u.ID, "refused", o.id, "not a choice of a proposed fact", false)
	}
	return true
}

// accept stores o's fact as u's, if u may.
func (p *part) accept(ctx context.Context, u adapters.User, o *offer) {
	if !p.may(ctx, u, Remember, zeroFact) {
		p.refuse(ctx, u, o)
		return
	}
	if p.store(ctx, u, o.fact, "remember proposed") {
		p.close(ctx, o, "Remembered by "+name(u))
	}
}

// dismiss drops o, if u may remember (and so decide on it).
func (p *part) dismiss(ctx context.Context, u adapters.User, o *offer) {
	if !p.may(ctx, u, Remember, zeroFact) {
		p.refuse(ctx, u, o)
		return
	}
	p.close(ctx, o, "Dismissed by "+name(u))
	p.t.Audit(ctx, u.ID, "dismiss proposed", o.id, o.fact, true)
}

func (p *part) refuse(ctx context.Context, u adapters.User, o *offer) {
	p.t.Audit(ctx, u.ID, "refused", "remember proposed", o.fact, false)
	p.t.Tell(ctx, u, "You may not add facts to this channel's memory; the proposal stays for someone who may.")
}

// close shows o decided and forgets it.
func (p *part) close(ctx context.Context, o *offer, outcome string) {
	delete(p.offers, o.id)
	if err := p.t.UpdateOffer(ctx, o.ref, o.prompt(adapters.PromptDecided, outcome)); err != nil {
		p.t.Log().Warn("show a proposed fact decided", "err", err)
	}
}

// latestOffer is the proposal shown last, if one is open.
func (p *part) latestOffer() *offer {
	var last *offer
	for _, o := range p.offers {
		if last == nil || o.seq > last.seq {
			last = o
		}
	}
	return last
}

func name(u adapters.User) string {
	if u.Name != "" {
		return u.Name
	}
	return u.ID
}
