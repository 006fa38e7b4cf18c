package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Thread is a chat thread bound to a Claude session.
type Thread struct {
	Key                         string // primary key, e.g. "console/console/main"
	Platform, Channel, ThreadID string
	StartedBy                   string
	SessionID, Cwd, Model, Mode string
	State                       string // "idle", "running", "closed", …: free text
	CreatedAt, LastActivity     time.Time
	// The thread's workspace, in a channel bound to a repository: the
	// repository, the worktree's path ("" once removed), its branch and the
	// commit the branch started from.
	Repo, Worktree, Branch, BaseCommit string
}

const threadColumns = `key, platform, channel, thread_id, started_by, session_id, cwd, model, mode, state, created_at, last_activity,
	repo, worktree, branch, base_commit`

func scanThread(r scanner) (Thread, error) {
	var t Thread
	var created, last sql.NullInt64
	err := r.Scan(&t.Key, &t.Platform, &t.Channel, &t.ThreadID, &t.StartedBy,
		&t.SessionID, &t.Cwd, &t.Model, &t.Mode, &t.State, &created, &last,
		&t.Repo, &t.Worktree, &t.Branch, &t.BaseCommit)
	t.CreatedAt, t.LastActivity = timeOf(created), timeOf(last)
	return t, err
}

// GetThread returns the thread with key; ok is false if there is none.
func (s *Store) GetThread(ctx context.Context, key string) (t Thread, ok bool, err error) {
	t, ok, err = queryOne(ctx, s.read, scanThread,
		`SELECT `+threadColumns+` FROM threads WHERE key = ?`, key)
	if err != nil {
		return Thread{}, false, fmt.Errorf("get thread %s: %w", key, err)
	}
	return t, ok, nil
}

// SaveThread inserts t or replaces every field of the thread with t's Key,
// except CreatedAt, which keeps the value first saved (if that was not zero).
func (s *Store) SaveThread(ctx context.Context, t Thread) error {
	_, err := s.write.ExecContext(ctx, `
INSERT INTO threads (`+threadColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET
	platform = excluded.platform,
	channel = excluded.channel,
	thread_id = excluded.thread_id,
	started_by = excluded.started_by,
	session_id = excluded.session_id,
	cwd = excluded.cwd,
	model = excluded.model,
	mode = excluded.mode,
	state = excluded.state,
	created_at = COALESCE(threads.created_at, excluded.created_at),
	last_activity = excluded.last_activity,
	repo = excluded.repo,
	worktree = excluded.worktree,
	branch = excluded.branch,
	base_commit = excluded.base_commit`,
		t.Key, t.Platform, t.Channel, t.ThreadID, t.StartedBy,
		t.SessionID, t.Cwd, t.Model, t.Mode, t.State,
		nullTime(t.CreatedAt), nullTime(t.LastActivity),
		t.Repo, t.Worktree, t.Branch, t.BaseCommit)
	if err != nil {
		return fmt.Errorf("save thread %s: %w", t.Key, err)
	}
	return nil
}

// ListThreads returns every thread, most recently active first (ties by key).
func (s *Store) ListThreads(ctx context.Context) ([]Thread, error) {
	ts, err := queryAll(ctx, s.read, scanThread,
		`SELECT `+threadColumns+` FROM threads ORDER BY last_activity DESC, key`)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	return ts, nil
}

// Channel is the settings of one platform channel or room.
type Channel struct {
	Key string
	Cwd string
	// Repo is the repository the channel is bound to ("" for none).
	Repo      string
	UpdatedBy string
	UpdatedAt time.Time
}

func scanChannel(r scanner) (Channel, error) {
	var c Channel
	var updated sql.NullInt64
	err := r.Scan(&c.Key, &c.Cwd, &c.UpdatedBy, &updated, &c.Repo)
	c.UpdatedAt = timeOf(updated)
	return c, err
}

// GetChannel returns the settings of the channel with key; ok is false if
// none were saved.
func (s *Store) GetChannel(ctx context.Context, key string) (c Channel, ok bool, err error) {
	c, ok, err = queryOne(ctx, s.read, scanChannel,
		`SELECT key, cwd, updated_by, updated_at, repo FROM channels WHERE key = ?`, key)
	if err != nil {
		return Channel{}, false, fmt.Errorf("get channel %s: %w", key, err)
	}
	return c, ok, nil
}

// SaveChannel inserts c or replaces the channel with c's Key.
func (s *Store) SaveChannel(ctx context.Context, c Channel) error {
	_, err := s.write.ExecContext(ctx, `
INSERT INTO channels (key, cwd, updated_by, updated_at, repo) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET
	cwd = excluded.cwd,
	updated_by = excluded.updated_by,
	updated_at = excluded.updated_at,
	repo = excluded.repo`,
		c.Key, c.Cwd, c.UpdatedBy, nullTime(c.UpdatedAt), c.Repo)
	if err != nil {
		return fmt.Errorf("save channel %s: %w", c.Key, err)
	}
	return nil
}

// IdleWorktrees returns the threads that still have a worktree and were
// last active before idleBefore, least recently active first.
func (s *Store) IdleWorktrees(ctx context.Context, idleBefore time.Time) ([]Thread, error) {
	ts, err := queryAll(ctx, s.read, scanThread,
		`SELECT `+threadColumns+` FROM threads WHERE worktree != '' AND last_activity < ? ORDER BY last_activity, key`,
		idleBefore.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("list idle worktrees: %w", err)
	}
	return ts, nil
}
