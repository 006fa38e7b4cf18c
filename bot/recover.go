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
//   - messages taken in and never taken up (settle.go): their threads are
//     told, once;
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

// turnsText counts u's turns for status and cost, saying how many of
// them a restart left without a recorded end (their cost is not known).
func turnsText(u store.Usage) string {
	s := fmt.Sprintf("%d %s", u.Turns, text.Plural(u.Turns, "turn", "turns"))
	if u.Interrupted > 0 {
		s += fmt.Sprintf(" (%d whose end a restart of the bot left unrecorded, cost unknown)", u.Interrupted)
	}
	return s
}

// awaiter is an adapter that can wait for the post behind a provisional
// ref (an outbox Mailroom): only a post the platform took counts as
// telling the thread.
type awaiter interface {
	Await(ctx context.Context, ref adapters.MessageRef) error
}
