package matrix

import (
	"context"
	"time"

	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// typingTimeout is how long one typing notice lasts; it is renewed before.
const typingTimeout = 30 * time.Second

// typingRequestTimeout bounds one typing request (mautrix's retries
// included): a notice that late is of no use.
const typingRequestTimeout = 10 * time.Second

// SetStatus implements adapters.Statuser with Matrix's typing notice
// ("claudeops is typing…"). It is per room, so it lasts while any thread
// of the room has a turn running, renewed until the last one ends.
//
// It returns at once: the bot calls it between a message arriving and the
// prompt reaching Claude, and on a turn's end before the next one starts.
// The room's typer sends the notices in the background, one at a time, so
// the last state set is the last one the server sees.
func (d *direct) SetStatus(_ context.Context, t adapters.ThreadRef, status string) error {
	a := (*Adapter)(d)
	room := id.RoomID(t.Channel)
	a.mu.Lock()
	defer a.mu.Unlock()
	busy := a.typing[room]
	if busy == nil {
		busy = map[string]bool{}
		a.typing[room] = busy
	}
	if status != "" {
		busy[t.Thread] = true
	} else {
		delete(busy, t.Thread)
	}
	if len(busy) == 0 {
		delete(a.typing, room)
	}
	if wake, ok := a.typers[room]; ok {
		select {
		case wake <- struct{}{}:
		default: // a wake-up is pending already
		}
		return nil
	}
	if len(busy) == 0 {
		return nil // nothing shown, nothing to clear
	}
	select {
	case <-a.closing:
		return nil
	default:
	}
	wake := make(chan struct{}, 1)
	a.typers[room] = wake
	a.wg.Add(1)
	go a.typer(room, wake)
	return nil
}

// typer owns the room's typing notice: it sends "typing" when a thread of
// the room becomes busy, renews it while one is, and clears it when none
// is; then it ends. On Close it clears a notice it had sent.
func (a *Adapter) typer(room id.RoomID, wake <-chan struct{}) {
	defer a.wg.Done()
	select {
	case <-a.ready:
	case <-a.closing:
		a.endTyper(room)
		return
	}
	shown := false // what the server was last told
	var renewAt time.Time
	for {
		a.mu.Lock()
		busy := len(a.typing[room]) > 0
		if !busy && !shown {
			delete(a.typers, room)
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		if busy != shown || (busy && !time.Now().Before(renewAt)) {
			a.sendTyping(room, busy)
			shown, renewAt = busy, time.Now().Add(typingTimeout*2/3)
			continue // the state may have changed meanwhile
		}
		timer := time.NewTimer(time.Until(renewAt))
		select {
		case <-wake:
		case <-timer.C:
		case <-a.closing:
			timer.Stop()
			if shown {
				a.sendTyping(room, false)
			}
			a.endTyper(room)
			return
		}
		timer.Stop()
	}
}

func (a *Adapter) endTyper(room id.RoomID) {
	a.mu.Lock()
	delete(a.typers, room)
	a.mu.Unlock()
}

// sendTyping tells the server whether the bot is typing in room; a
// failure is only logged (a notice lasts typingTimeout at most).
func (a *Adapter) sendTyping(room id.RoomID, typing bool) {
	ctx, cancel := context.WithTimeout(context.Background(), typingRequestTimeout)
	defer cancel()
	if _, err := a.cli.UserTyping(ctx, room, typing, typingTimeout); err != nil {
		a.log.Debug("matrix: typing notice", "room", room, "typing", typing, "err", err)
	}
}
