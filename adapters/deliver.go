package adapters

import (
	"errors"
	"log/slog"
)

// ErrLoggedOnce is wrapped by an error deliver returns whose cause the bot
// has already logged, once for many events (the storage failing; the
// thread of a message it addressed the bot in is told too): the adapter
// still acts on the error (no ack, a redelivery), but does not log each
// event at WARN (DeliverLevel).
var ErrLoggedOnce = errors.New("its cause logged once by the bot")

// DeliverLevel is the level an adapter logs a failed deliver at: debug
// for one whose cause the bot has logged once (ErrLoggedOnce), warn otherwise.
func DeliverLevel(err error) slog.Level {
	if errors.Is(err, ErrLoggedOnce) {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}
