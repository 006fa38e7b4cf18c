package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/claudeops/claudeops/adapters"
)

const (
	defaultLimit = 50
	maxLimit     = 200
	// maxMessageRunes cuts one long message; maxThreadBytes bounds the
	// whole answer (the CLI cuts large tool output itself, less usefully),
	// dropping the oldest messages first.
	maxMessageRunes = 4000
	maxThreadBytes  = 80_000
)

// readThread returns the thread's last messages, oldest first, one header
// line each, written by the bot: [<time> <name> · <id>], the bot's own
// [<time> claudeops (bot)]. A message's further lines are indented, so that
// no text a person wrote can pass for a header.
func (s *Server) readThread(ctx context.Context, raw []byte) (string, error) {
	var in struct {
		Limit json.RawMessage `json:"limit"`
	}
	if err := arguments(raw, &in); err != nil {
		return "", err
	}
	limit, err := readLimit(in.Limit)
	if err != nil {
		return "", err
	}
	said, err := s.env.Read(ctx, limit)
	if err != nil {
		return "", fmt.Errorf("could not read the thread: %s", truncate(err.Error(), 300))
	}
	if len(said) > limit {
		said = said[len(said)-limit:] // the reader's contract, kept here too
	}
	if len(said) == 0 {
		return "The thread has no messages.", nil
	}
	return formatThread(said), nil
}

// readLimit: absent is the default, more than the maximum is the maximum;
// anything but a whole number of at least 1 is refused.
func readLimit(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return defaultLimit, nil
	}
	n := string(raw)
	if n[0] != '-' && (n[0] < '0' || n[0] > '9') {
		return 0, fmt.Errorf(`"limit" must be a whole number from 1 to %d, not %s`, maxLimit, truncate(n, 40))
	}
	f, err := strconv.ParseFloat(n, 64)
	if errors.Is(err, strconv.ErrRange) && f > 0 {
		return maxLimit, nil // too large even for a float
	}
	if err != nil || f != math.Trunc(f) || f < 1 {
		return 0, fmt.Errorf(`"limit" must be a whole number from 1 to %d, not %s`, maxLimit, truncate(n, 40))
	}
	return int(min(f, maxLimit)), nil
}

func formatThread(said []adapters.Said) string {
	lines := make([]string, len(said))
	for i, m := range said {
		lines[i] = formatSaid(m)
	}
	total, first := 0, len(lines)
	for first > 0 && total+len(lines[first-1])+1 <= maxThreadBytes {
		first--
		total += len(lines[first]) + 1
	}
	if first == len(lines) { // even the newest alone is too long
		first = len(lines) - 1
		lines[first] = truncate(lines[first], maxThreadBytes)
	}
	out := strings.Join(lines[first:], "\n")
	if first > 0 {
		out = fmt.Sprintf("(%d earlier messages left out: the answer is capped at %d bytes)\n", first, maxThreadBytes) + out
	}
	return out
}

func formatSaid(m adapters.Said) string {
	at := "unknown time"
	if !m.At.IsZero() {
		at = m.At.UTC().Format(time.RFC3339)
	}
	var head string
	if m.FromBot {
		head = fmt.Sprintf("[%s %s (bot)]", at, ServerName)
	} else {
		name := headerPart(m.User.Name)
		if name == "" {
			name = "unknown"
		}
		head = fmt.Sprintf("[%s %s · %s]", at, name, headerPart(m.User.ID))
	}
	text := plainText(m.Text, maxMessageRunes)
	if text == "" {
		return head + " (no text)"
	}
	return head + " " + strings.ReplaceAll(text, "\n", "\n  ")
}

// headerPart is a name or id as a header shows it: one line, and no
// brackets, which would let a display name close the header early.
func headerPart(s string) string {
	s = plainLine(s, 80)
	return strings.NewReplacer("[", "(", "]", ")").Replace(s)
}
