package adapters

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
)

// TestDeliverLevel: an error whose cause the bot logged once is logged
// by the adapter at debug, wrapped however deep; any other at warn.
func TestDeliverLevel(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want slog.Level
	}{
		{errors.New("record message x: constraint"), slog.LevelWarn},
		{fmt.Errorf("record message x: %w (%w)", errors.New("disk I/O error"), ErrLoggedOnce), slog.LevelDebug},
		{fmt.Errorf("deliver: %w", fmt.Errorf("record: %w", ErrLoggedOnce)), slog.LevelDebug},
	} {
		if got := DeliverLevel(tt.err); got != tt.want {
			t.Errorf("DeliverLevel(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
