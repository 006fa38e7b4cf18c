package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/bot/thread"
	"github.com/claudeops/claudeops/settings"
)

// Per-user quotas: the channel's quota setting, else
// CLAUDEOPS_MAX_THREADS_PER_USER (live plus waiting sessions a user's
// messages started), and CLAUDEOPS_MAX_SCHEDULES_PER_USER. Admins (of the
// channel, for the first) are exempt from both; scheduled runs are not attributed to anyone
// (they count toward CLAUDEOPS_MAX_SESSIONS only).

// intentTTL bounds how long admit's attribution waits for its acquire
// (which follows at once on the same worker; a message that never reached
// acquire must not hold a place for long).
const intentTTL = time.Minute

// refusalEvery: a user refused by the per-user thread limit is told at most
// this often; later refusals are only audited.
const refusalEvery = time.Minute

// quotaAt is the per-user limit of live threads in ref's channel (0:
// none) and where it comes from: the quota setting that applies there
// (ConfigLayer gives CLAUDEOPS_MAX_THREADS_PER_USER at the bot's scope).
// A value a channel admin set in chat binds only as far as it is tighter
// than what applies without it (what is wider may have changed since).
// It counts the user's sessions everywhere: what it guards is the bot's
// shared slots.
func quotaAt(r *settings.Resolver, ref adapters.ThreadRef, fallback int) (int, string) {
	w := thread.Where(ref)
	v := r.Get(w, settings.Quota)
	if !v.Set() {
		return max(fallback, 0), "CLAUDEOPS_MAX_THREADS_PER_USER"
	}
	if v.Source.Origin == settings.FromChat && !r.IsBotAdmin(v.Source.By) {
		if wider := r.Wider(w, settings.Quota); wider.Set() && !settings.Tighter(v.Text, wider.Text) {
			v = wider
		}
	}
	return v.Int(), v.Source.String()
}

// admit decides whether a message of user may make thread key take (or
// wait for) a slot. limited is false for admins, who are attributed but
// not limited. A user at the limit first gives back their own least
// recently used idle session (it is stopped as eviction does; the thread
// resumes later); if none is idle, admit reports false and records nothing.
func (s *slots) admit(key, user string, limited bool, limit int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[key] != nil {
		return true
	}
	now := s.now()
	if limited && limit > 0 && s.countLocked(user, key, now) >= limit {
		var lru *slot
		for _, sl := range s.held {
			if !sl.counted || sl.user != user || sl.busy || sl.evicting {
				continue
			}
			if lru == nil || sl.lastUsed.Before(lru.lastUsed) {
				lru = sl
			}
		}
		if lru == nil {
			return false
		}
		lru.evicting = true
		go lru.evict() // the holder takes its own locks
	}
	s.intents[key] = slotIntent{user: user, counted: limited, at: now}
	return true
}

// countLocked is how many threads count toward user's limit: held (and not
// being given back), waiting, and admitted on their way to acquire; except
// but. Called with the lock held.
func (s *slots) countLocked(user, but string, now time.Time) int {
	n := 0
	for k, sl := range s.held {
		if sl.counted && sl.user == user && !sl.evicting && k != but {
			n++
		}
	}
	for _, w := range s.waiting {
		if w.counted && w.user == user && w.key != but {
			n++
		}
	}
	for k, in := range s.intents {
		switch {
		case now.Sub(in.at) > intentTTL:
			delete(s.intents, k)
		case in.counted && in.user == user && k != but:
			n++
		}
	}
	return n
}

// userThreads is how many threads count toward user's limit.
func (s *slots) userThreads(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.countLocked(user, "", s.now())
}

// tellRefusal reports whether user should be told of a refusal now (at most
// once per refusalEvery), and notes it.
func (s *slots) tellRefusal(user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if last, ok := s.refusedAt[user]; ok && now.Sub(last) < refusalEvery {
		return false
	}
	s.refusedAt[user] = now
	return true
}

// quotaGate applies CLAUDEOPS_MAX_THREADS_PER_USER to a chat message that
// would start (or resume) this thread's session, and attributes the session
// to its sender. It reports true when the message was refused: it is then
// neither sent to Claude nor kept (the user is told, the first time in a
// minute, to send it again). Commands need no session and pass.
//
// onMessage calls it for every message that is neither a command nor a
// typed decision, right before the message goes to Claude.
func (w *worker) quotaGate(ctx context.Context, ev adapters.Event, text string) bool {
	if c, _ := findCommand(w.b.commands, text); w.sess.proc != nil || ev.User.ID == "" || c != nil {
		return false
	}
	limit, from := quotaAt(w.cfg.Scopes, w.ref, w.cfg.MaxThreadsPerUser)
	limited := limit > 0 && !w.isAdmin(ev.User.ID)
	if w.slots.admit(string(w.key), ev.User.ID, limited, limit) {
		return false
	}
	w.log.Info("refused: per-user thread limit", "user", ev.User.ID, "limit", limit, "from", from)
	w.audit(ctx, ev.User.ID, "refused", "thread", fmt.Sprintf("quota %d reached (%s), none idle", limit, from), false)
	if w.slots.tellRefusal(ev.User.ID) {
		w.tell(ctx, ev.User, fmt.Sprintf(
			"Not taken: you have %d Claude sessions running or waiting, the most one person may have, and none is idle to make room. Send this again once one has finished (or after `stop` in one of them). Messages refused in the next minute get no note.", limit))
	}
	return true
}
