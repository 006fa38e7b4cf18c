package bot

import (
	"sync"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

// firstTexts times the first text of each turn a person asked for, up to
// the moment the platform has it: at once for an Immediate adapter (the
// console writes it as it is handed over), else when the adapter's
// mailroom has made the post, after whatever pacing or 429 held it
// (postTracker, mailroom.go).
type firstTexts struct {
	obs Observer
	now func() time.Time

	mu sync.Mutex
	// waiting: the first texts handed to a mailroom and not posted yet,
	// by platform and provisional id, with when their person asked. A
	// post that never lands leaves its entry; at most maxWaitingTexts are
	// kept.
	waiting map[string]time.Time
}

const maxWaitingTexts = 1024

func newFirstTexts(obs Observer, now func() time.Time) *firstTexts {
	return &firstTexts{obs: obs, now: now, waiting: make(map[string]time.Time)}
}

func waitingKey(platform, id string) string { return platform + "\x00" + id }

// handed: the turn's first text went to the adapter as ref; asked is when
// the person's message reached the bot; c is the adapter's mailroom that
// carries it (nil: the adapter took it at once).
func (f *firstTexts) handed(ref adapters.MessageRef, asked time.Time, c postTracker) {
	if c == nil {
		f.obs.FirstText(f.now().Sub(asked))
		return
	}
	f.mu.Lock()
	if len(f.waiting) < maxWaitingTexts {
		f.waiting[waitingKey(ref.Thread.Platform, ref.ID)] = asked
	}
	f.mu.Unlock()
	// The lane may have made the post before it was noted here; whichever
	// of this and OnPosted finds the entry tells it.
	if c.Posted(ref) {
		f.posted(ref.Thread, ref.ID)
	}
}

// posted: a mailroom made the post it handed out as id in t.
func (f *firstTexts) posted(t adapters.ThreadRef, id string) {
	k := waitingKey(t.Platform, id)
	f.mu.Lock()
	asked, ok := f.waiting[k]
	delete(f.waiting, k)
	f.mu.Unlock()
	if ok {
		f.obs.FirstText(f.now().Sub(asked))
	}
}
