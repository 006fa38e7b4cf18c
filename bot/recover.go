package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/internal/text"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/store"
)

// Recover runs once at start, before events flow and before any session
// resumes, and settles what a previous run left behind, crashed or not:
//
//   - process groups of its sessions still running are ended, so that no
//     session ever has two processes (leftovers.go);
//   - turns it never finished are closed as interrupted: they count in
//     `status` and `cost`, and their threads are told, once;
//   - approvals left pending can no longer be answered (their process is
//     gone): they are marked expired and their prompts and tool lines say
//     so; tool lines left running are shown stopped (restartlines.go);
//   - messages taken in and never taken up (settle.go says when one is
//     settled): their threads are told, once;
//   - what the extensions keep of operations cut off (thread.Recoverer: a
//     push) is told by them.
//
// It fails only when the store does: a thread that cannot be told now is
// told at a later start.
func (b *Bot) Recover(ctx context.Context) error {
	if err := b.endLeftovers(ctx); err != nil {
		return err
	}
	n, err := b.store.CloseRunningTurns(ctx, b.now())
	if err != nil {
		return err
	}
	if n > 0 {
		b.log.Warn("turns a restart found without a recorded end closed as interrupted", "turns", n)
	}
	// Told here, once: the run they were cut from never told them, and
	// the next start finds them closed.
	for range n {
		b.cfg.Observer.TurnEnded(TurnInterrupted, 0)
	}
	if err := b.expireApprovals(ctx); err != nil {
		return err
	}
	if err := b.endRunningLines(ctx); err != nil {
		return err
	}
	if err := b.tellInterrupted(ctx); err != nil {
		return err
	}
	if err := b.tellUnsettled(ctx); err != nil {
		return err
	}
	for _, e := range b.cfg.Extensions {
		if r, ok := e.(thread.Recoverer); ok {
			r.Recover(ctx)
		}
	}
	return nil
}

// expireApprovals expires the approvals a previous run left pending.
func (b *Bot) expireApprovals(ctx context.Context) error {
	pend, err := b.store.PendingApprovals(ctx)
	if err != nil {
		return fmt.Errorf("recover pending approvals: %w", err)
	}
	for _, a := range pend {
		next := a
		next.State = string(approvals.StateExpired)
		next.DecidedAt = b.now()
		next.Reason = "the bot restarted"
		ok, err := b.store.DecideApproval(ctx, a.ID, a.State, next)
		if err != nil {
			return fmt.Errorf("expire approval %s: %w", a.ID, err)
		}
		if !ok {
			continue
		}
		b.cfg.Observer.ApprovalSettled(a.Kind, ApprovalExpired)
		b.log.Info("approval expired by restart", "approval", a.ID, "thread", a.ThreadKey, "tool", a.Tool)
		b.endToolLine(ctx, a)
		const why = "Expired: the bot restarted before anyone decided."
		ref, ok := adapters.ParseMessageRef(a.PromptRef)
		ad := b.adapter(ref.Thread.Platform)
		if ok && ad != nil {
			p := promptFromApproval(a)
			p.State = adapters.PromptExpired
			p.Outcome = why
			if err := ad.UpdatePrompt(ctx, ref, p); err != nil {
				b.log.Warn("update expired prompt", "approval", a.ID, "err", err)
			}
			continue
		}
		// The bot died between showing the prompt and recording where: say
		// it in the thread instead.
		if t, ok := adapters.ThreadKey(a.ThreadKey).Ref(); ok && b.adapter(t.Platform) != nil {
			b.notice(ctx, t, fmt.Sprintf("The approval %s for %s expired: the bot restarted before anyone decided.", a.ID, a.Tool), false)
		}
	}
	return nil
}

// noticeTimeout bounds posting one thread's restart notice.
const noticeTimeout = 30 * time.Second

// tellInterrupted tells each thread whose turn a restart found without a
// recorded end, once: a thread is marked told only once its notice is
// posted, so one whose platform is not running now (or failed) is told at
// a later start, and one already told is never told again.
func (b *Bot) tellInterrupted(ctx context.Context) error {
	owed, err := b.store.TurnsOwingNotice(ctx)
	if err != nil {
		return err
	}
	for _, turns := range byThread(owed, func(t store.Turn) string { return t.ThreadKey }) {
		key := turns[0].ThreadKey
		last := turns[len(turns)-1]
		ref, ok := adapters.ThreadKey(key).Ref()
		if !ok {
			// Nowhere to say it, ever: do not try again at every start.
			b.log.Warn("interrupted turn of an unreadable thread key: not told", "thread", key)
			if err := b.store.NoticeGiven(ctx, key, last.ID); err != nil {
				return err
			}
			continue
		}
		ad := b.adapter(ref.Platform)
		if ad == nil {
			b.log.Info("interrupted turn not told: its platform does not run now", "thread", key)
			continue
		}
		// Only a post that was made counts as telling the thread: a
		// mailroom's provisional ref is waited for.
		pctx, cancel := context.WithTimeout(ctx, noticeTimeout)
		posted, err := ad.Post(pctx, ref, adapters.Message{Kind: adapters.KindNotice, Text: interruptedText(turns), Error: true})
		if aw, ok := ad.(awaiter); ok && err == nil {
			err = aw.Await(pctx, posted)
		}
		cancel()
		if err != nil {
			b.log.Warn("tell a thread its turn was interrupted (again at the next start)", "thread", key, "err", err)
			continue
		}
		if err := b.store.NoticeGiven(ctx, key, last.ID); err != nil {
			return err
		}
	}
	return nil
}

// tellUnsettled tells each thread whose messages a restart cut off before
// they were taken up, once: a message is settled only once its notice is
// posted, so a thread whose platform does not run now is told at a later
// start.
func (b *Bot) tellUnsettled(ctx context.Context) error {
	ms, err := b.store.UnsettledMessages(ctx)
	if err != nil {
		return err
	}
	for _, group := range byThread(ms, func(m store.ReceivedMessage) string { return m.ThreadKey }) {
		ref, ok := adapters.ThreadKey(group[0].ThreadKey).Ref()
		if ok && b.adapter(ref.Platform) == nil {
			b.log.Info("messages cut off by a restart not told: their platform does not run now", "thread", group[0].ThreadKey)
			continue
		}
		if ok {
			pctx, cancel := context.WithTimeout(ctx, noticeTimeout)
			_, err := b.adapter(ref.Platform).Post(pctx, ref, adapters.Message{Kind: adapters.KindNotice, Text: unsettledText(group), Error: true})
			cancel()
			if err != nil {
				b.log.Warn("tell a thread its messages were not taken up (again at the next start)", "thread", group[0].ThreadKey, "err", err)
				continue
			}
		} else {
			// Nowhere to say it, ever: do not try again at every start.
			b.log.Warn("message cut off by a restart in an unreadable thread key: not told", "thread", group[0].ThreadKey)
		}
		for _, m := range group {
			if err := b.store.SettleMessage(ctx, m.Platform, m.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

// unsettledText tells a thread which of its messages a restart cut off.
func unsettledText(ms []store.ReceivedMessage) string {
	first := ms[0]
	what := "your message"
	if t := strings.TrimSpace(first.Text); t != "" {
		what = "“" + text.Shorten(text.OneLine(t), 80) + "”"
	}
	more := ""
	if n := len(ms) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d later %s)", n, text.Plural(n, "message", "messages"))
	}
	return fmt.Sprintf("The bot restarted before Claude took up %s, sent %s%s: it was not run. "+
		"Send it again if it still matters.", what, first.ReceivedAt.UTC().Format("2006-01-02 15:04 UTC"), more)
}

// byThread cuts xs, sorted by thread, into one run per thread.
func byThread[T any](xs []T, thread func(T) string) [][]T {
	var runs [][]T
	for len(xs) > 0 {
		n := 1
		for n < len(xs) && thread(xs[n]) == thread(xs[0]) {
			n++
		}
		runs = append(runs, xs[:n])
		xs = xs[n:]
	}
	return runs
}

// interruptedText tells a thread that a restart cut its turns off (one,
// usually).
func interruptedText(turns []store.Turn) string {
	last := turns[len(turns)-1]
	what := "a turn Claude had started by itself"
	if p := strings.TrimSpace(last.Prompt); p != "" {
		what = "“" + text.Shorten(text.OneLine(p), 80) + "”"
	}
	when := last.StartedAt.UTC().Format("2006-01-02 15:04 UTC")
	more := ""
	if n := len(turns) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d earlier %s)", n, text.Plural(n, "turn", "turns"))
	}
	// Not "cut off": a turn whose end the storage refused to record
	// (records.go) was shown whole, and nothing left tells the two apart.
	return fmt.Sprintf("The bot restarted during Claude's turn on %s, started %s%s, before that turn's end was recorded, "+
		"so the bot cannot tell whether it finished: if Claude's answer above ends with its footer, it did; "+
		"if not, what it had not finished is lost. Your next message resumes the conversation.", what, when, more)
}

// awaiter is an adapter that can wait for the post behind a provisional
// ref (an outbox Mailroom): only a post the platform took counts as
// telling the thread.
type awaiter interface {
	Await(ctx context.Context, ref adapters.MessageRef) error
}
