package slack

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// seenLive remembers, per conversation (a thread, a channel's top level),
// the latest message handed to the bot: catch-up reads after it. The bot
// records in its dedupe only what it takes, not what it refuses (a person
// not allowed): without this, a refusal would be read back and told again
// at every connect. Kept in memory across reconnects, saved as catch-up
// positions when Run ends (a crash loses it: a refusal may then be told
// once more). Bounded: past seenCap conversations the oldest noted is
// forgotten, which costs only a re-read.
type seenLive struct {
	mu    sync.Mutex
	ts    map[string]string
	order []string // keys, first noted first
}

const seenCap = 1024

// note records that the message at ts was handed over in conversation key.
func (s *seenLive) note(key, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ts == nil {
		s.ts = map[string]string{}
	}
	old, ok := s.ts[key]
	if !ok {
		s.order = append(s.order, key)
		if len(s.order) > seenCap {
			delete(s.ts, s.order[0])
			s.order = s.order[1:]
		}
	}
	if !ok || tsAfter(ts, old) {
		s.ts[key] = ts
	}
}

// snapshot is a copy of what was noted.
func (s *seenLive) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.ts))
	for k, v := range s.ts {
		out[k] = v
	}
	return out
}

// conversationKeys are the catch-up keys of a message: its thread, and for
// a top-level message its channel too (catchUp.thread and .mentions).
func conversationKeys(ev adapters.Event) (keys []string, ts string) {
	i := strings.LastIndexByte(ev.Message.ID, '/')
	if i < 0 {
		return nil, ""
	}
	ts = ev.Message.ID[i+1:]
	teamChannel := ev.Message.ID[:i]
	keys = []string{teamChannel + "/" + ev.Thread.Thread}
	if ev.Thread.Thread == ts {
		keys = append(keys, teamChannel)
	}
	return keys, ts
}

// noteHanded records an event handed to the bot.
func (a *Adapter) noteHanded(ev adapters.Event) {
	keys, ts := conversationKeys(ev)
	if _, ok := parseTS(ts); !ok {
		return
	}
	for _, k := range keys {
		a.seen.note(k, ts)
	}
}

// saveSeen keeps what the live path handed over as catch-up positions, so
// that the next run does not read it back (within a few seconds: Run is
// ending).
func (a *Adapter) saveSeen(ctx context.Context) {
	a.mu.Lock()
	st := a.catchUpState
	a.mu.Unlock()
	if st == nil || a.cfg.CatchUp <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for key, ts := range a.seen.snapshot() {
		pos, err := st.Position(ctx, key)
		if err == nil && !tsAfter(ts, pos) {
			continue
		}
		if err := st.SavePosition(ctx, key, ts, a.now()); err != nil {
			a.log.Warn("slack: save what was handed over", "key", key, "err", err)
			return
		}
	}
}
