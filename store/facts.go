package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// The bounds of a channel's facts: they ride on every request of every
// session of the channel, so the store refuses more.
const (
	MaxFacts     = 50
	MaxFactChars = 500
)

// ErrTooManyFacts: the channel has MaxFacts facts already.
var ErrTooManyFacts = fmt.Errorf("this channel has %d facts already, the most it may keep: forget one first", MaxFacts)

// ErrFactTooLong: a fact is over MaxFactChars characters.
var ErrFactTooLong = fmt.Errorf("a fact may be at most %d characters", MaxFactChars)

// ErrEmptyFact: a fact has no text.
var ErrEmptyFact = errors.New("a fact needs some text")

// Fact is one thing a channel asked Claude to remember (`remember`).
type Fact struct {
	ID         int64
	ChannelKey string
	Text       string
	// By is who added it (a user id), ByName their name then.
	By, ByName string
	At         time.Time
}

func scanFact(r scanner) (Fact, error) {
	var f Fact
	var at sql.NullInt64
	err := r.Scan(&f.ID, &f.ChannelKey, &f.Text, &f.By, &f.ByName, &at)
	f.At = timeOf(at)
	return f, err
}

// AddFact stores f for its channel (its ID is ignored) and returns it with
// its new ID. IDs are never reused. It refuses an empty fact, one over
// MaxFactChars, and a channel's fact beyond MaxFacts (counted in the same
// statement, so two adds at once cannot pass the bound).
func (s *Store) AddFact(ctx context.Context, f Fact) (Fact, error) {
	switch {
	case f.Text == "":
		return Fact{}, ErrEmptyFact
	case utf8.RuneCountInString(f.Text) > MaxFactChars:
		return Fact{}, ErrFactTooLong
	}
	res, err := s.write.ExecContext(ctx, `
INSERT INTO facts (channel_key, text, added_by, added_name, added_at)
SELECT ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM facts WHERE channel_key = ?) < ?`,
		f.ChannelKey, f.Text, f.By, f.ByName, nullTime(f.At), f.ChannelKey, MaxFacts)
	if err != nil {
		return Fact{}, fmt.Errorf("add a fact to channel %s: %w", f.ChannelKey, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return Fact{}, fmt.Errorf("add a fact to channel %s: %w", f.ChannelKey, err)
	} else if n == 0 {
		return Fact{}, ErrTooManyFacts
	}
	if f.ID, err = res.LastInsertId(); err != nil {
		return Fact{}, fmt.Errorf("add a fact to channel %s: %w", f.ChannelKey, err)
	}
	return f, nil
}

// Facts are the channel's facts, oldest first: the order `memory`
// numbers them in.
func (s *Store) Facts(ctx context.Context, channelKey string) ([]Fact, error) {
	fs, err := queryAll(ctx, s.read, scanFact, `
SELECT id, channel_key, text, added_by, added_name, added_at FROM facts WHERE channel_key = ? ORDER BY id`, channelKey)
	if err != nil {
		return nil, fmt.Errorf("list the facts of channel %s: %w", channelKey, err)
	}
	return fs, nil
}

// RemoveFact removes the fact id of the channel (a fact of another
// channel is not found) and returns it; false when there was none.
func (s *Store) RemoveFact(ctx context.Context, channelKey string, id int64) (Fact, bool, error) {
	f, ok, err := queryOne(ctx, s.write, scanFact, `
DELETE FROM facts WHERE channel_key = ? AND id = ?
RETURNING id, channel_key, text, added_by, added_name, added_at`, channelKey, id)
	if err != nil {
		return Fact{}, false, fmt.Errorf("remove fact %d of channel %s: %w", id, channelKey, err)
	}
	return f, ok, nil
}
