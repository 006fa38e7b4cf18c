package matrix

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/claudeops/claudeops/adapters"
)

// cursor is the sync store. mautrix saves next_batch before it processes a
// response; cursor keeps that in memory and persists a position only once
// trackingSyncer has seen every event of its response delivered.
type cursor struct {
	state   State
	account string
	now     func() time.Time

	mu        sync.Mutex
	next      string    // what mautrix syncs from
	durable   string    // what a restart syncs from
	durableAt time.Time // when durable was saved
	filterID  string
	loaded    bool
	deliverOK bool // every delivery of the current response succeeded
}

func (c *cursor) load(ctx context.Context) error {
	if c.loaded {
		return nil
	}
	sc, err := c.state.SyncPosition(ctx, c.account)
	if err != nil {
		return fmt.Errorf("matrix: load the sync position: %w", err)
	}
	c.next, c.durable, c.durableAt, c.filterID, c.loaded = sc.NextBatch, sc.NextBatch, sc.SavedAt, sc.FilterID, true
	return nil
}

func (c *cursor) SaveFilterID(ctx context.Context, _ id.UserID, filterID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.filterID = filterID
	return c.state.SaveSyncPosition(ctx, c.account, SyncPosition{NextBatch: c.durable, FilterID: filterID, SavedAt: c.now()})
}

func (c *cursor) LoadFilterID(ctx context.Context, _ id.UserID) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.load(ctx); err != nil {
		return "", err
	}
	return c.filterID, nil
}

func (c *cursor) SaveNextBatch(_ context.Context, _ id.UserID, token string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next = token
	c.deliverOK = true
	return nil
}

func (c *cursor) LoadNextBatch(ctx context.Context, _ id.UserID) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.load(ctx); err != nil {
		return "", err
	}
	return c.next, nil
}

// failed marks the current response as not wholly delivered.
func (c *cursor) failed() {
	c.mu.Lock()
	c.deliverOK = false
	c.mu.Unlock()
}

// commit persists token after its response was processed, unless a
// delivery failed: then the response must be synced again.
func (c *cursor) commit(ctx context.Context, token string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.deliverOK {
		return errors.New("an event of the last sync response was not delivered")
	}
	if token == c.durable {
		return nil
	}
	at := c.now()
	if err := c.state.SaveSyncPosition(ctx, c.account, SyncPosition{NextBatch: token, FilterID: c.filterID, SavedAt: at}); err != nil {
		return err
	}
	c.durable, c.durableAt = token, at
	return nil
}

// savedAt is when the position a response was synced from was saved.
func (c *cursor) savedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.durableAt
}

// rewind makes the next sync start from the durable position.
func (c *cursor) rewind() {
	c.mu.Lock()
	c.next = c.durable
	c.mu.Unlock()
}

// trackingSyncer commits the sync position after a response is processed.
// It also reports the sync's link: a response is news from the homeserver.
type trackingSyncer struct {
	*mautrix.DefaultSyncer
	cur  *cursor
	conn *adapters.ConnTracker
}

func (s *trackingSyncer) ProcessResponse(ctx context.Context, resp *mautrix.RespSync, since string) error {
	s.conn.Set(adapters.Connected, nil)
	if err := s.DefaultSyncer.ProcessResponse(ctx, resp, since); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := s.cur.commit(ctx, resp.NextBatch); err != nil {
		return fmt.Errorf("keep the sync position: %w", err)
	}
	return nil
}

// OnFailedSync retries transient failures sooner than mautrix's 10 s.
func (s *trackingSyncer) OnFailedSync(res *mautrix.RespSync, err error) (time.Duration, error) {
	s.conn.Set(adapters.Disconnected, err)
	if errors.Is(err, mautrix.MUnknownToken) {
		return 0, err
	}
	return 3 * time.Second, nil
}
