package matrix

import (
	"context"
	"time"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// typingTimeout is how long one typing notice lasts; it is renewed before.
const typingTimeout = 30 * time.Second

// SetStatus implements adapters.Statuser with Matrix's typing notice
// ("claudeops is typing…"). It is per room, so it lasts while any thread
// of the room has a turn running, renewed until the last one ends.
func (a *Adapter) SetStatus(ctx context.Context, t adapters.ThreadRef, status string) error {
	room := id.RoomID(t.Channel)
	a.mu.Lock()
	busy := a.typing[room]
	if busy == nil {
		busy = map[string]bool{}
		a.typing[room] = busy
	}
	was := len(busy)
	if status != "" {
		busy[t.Thread] = true
	} else {
		delete(busy, t.Thread)
	}
	now := len(busy)
	if now == 0 {
		delete(a.typing, room)
	}
	a.mu.Unlock()
	switch {
	case was == 0 && now > 0:
		a.wg.Add(1)
		go a.keepTyping(room)
	case was > 0 && now == 0:
		select {
		case <-a.ready:
		default:
			return nil
		}
		if _, err := a.cli.UserTyping(ctx, room, false, 0); err != nil {
			return err
		}
	}
	return nil
}

// keepTyping renews the room's typing notice while a thread there is busy.
func (a *Adapter) keepTyping(room id.RoomID) {
	defer a.wg.Done()
	tick := time.NewTicker(typingTimeout * 2 / 3)
	defer tick.Stop()
	for {
		a.mu.Lock()
		busy := len(a.typing[room]) > 0
		a.mu.Unlock()
		if !busy {
			return
		}
		select {
		case <-a.ready:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := a.cli.UserTyping(ctx, room, true, typingTimeout); err != nil {
				a.log.Debug("matrix: typing notice", "room", room, "err", err)
			}
			cancel()
		case <-a.closing:
			return
		}
		select {
		case <-tick.C:
		case <-a.closing:
			return
		}
	}
}
