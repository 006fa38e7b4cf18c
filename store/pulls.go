package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// PullRequest is a pull request the bot opened on a forge, and where it
// came from: the thread that made it (a review on it is told there) and,
// for a schedule's, the schedule whose runs it gathers.
type PullRequest struct {
	// URL is its page on the forge: the key, unique across forges (a
	// forge's webhook names it too).
	URL string
	// Repo is the repository as the channel binds it (a clone URL or
	// path); ForgeRepo is "owner/name" on the forge.
	Repo, ForgeRepo string
	Number          int64
	Head, Base      string // the branches it is from and into
	ThreadKey       string
	ScheduleID      int64 // 0: not a schedule's
	// State is open, closed or merged, as last seen.
	State     string
	OpenedBy  string // who asked for it: a user's ID, or "schedule:<id>"
	OpenedAt  time.Time
	UpdatedAt time.Time
}

const pullColumns = `url, repo, forge_repo, number, head, base, thread_key, schedule_id, state, opened_by, opened_at, updated_at`

func scanPull(r scanner) (PullRequest, error) {
	var p PullRequest
	var opened, updated sql.NullInt64
	err := r.Scan(&p.URL, &p.Repo, &p.ForgeRepo, &p.Number, &p.Head, &p.Base, &p.ThreadKey, &p.ScheduleID,
		&p.State, &p.OpenedBy, &opened, &updated)
	p.OpenedAt, p.UpdatedAt = timeOf(opened), timeOf(updated)
	return p, err
}

// SavePullRequest stores p, or updates the one with its URL (all but
// OpenedAt and OpenedBy, which stay as first stored).
func (s *Store) SavePullRequest(ctx context.Context, p PullRequest) error {
	if p.URL == "" {
		return fmt.Errorf("save pull request #%d of %s: no URL", p.Number, p.ForgeRepo)
	}
	if p.State == "" {
		p.State = "open"
	}
	_, err := s.write.ExecContext(ctx, `
INSERT INTO pull_requests (`+pullColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (url) DO UPDATE SET repo = excluded.repo, forge_repo = excluded.forge_repo,
	number = excluded.number, head = excluded.head, base = excluded.base,
	thread_key = excluded.thread_key, schedule_id = excluded.schedule_id,
	state = excluded.state, updated_at = excluded.updated_at`,
		p.URL, p.Repo, p.ForgeRepo, p.Number, p.Head, p.Base, p.ThreadKey, p.ScheduleID,
		p.State, p.OpenedBy, nullTime(p.OpenedAt), nullTime(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save pull request %s: %w", p.URL, err)
	}
	return nil
}

// PullRequestByURL is the pull request the bot opened at url; ok is
// false for any other (one the bot did not open).
func (s *Store) PullRequestByURL(ctx context.Context, url string) (p PullRequest, ok bool, err error) {
	p, ok, err = queryOne(ctx, s.read, scanPull, `SELECT `+pullColumns+` FROM pull_requests WHERE url = ?`, url)
	if err != nil {
		return PullRequest{}, false, fmt.Errorf("read pull request %s: %w", url, err)
	}
	return p, ok, nil
}

// PullRequestsOfThread are the pull requests a thread made, newest first.
func (s *Store) PullRequestsOfThread(ctx context.Context, threadKey string) ([]PullRequest, error) {
	ps, err := queryAll(ctx, s.read, scanPull, `SELECT `+pullColumns+` FROM pull_requests
WHERE thread_key = ? ORDER BY updated_at DESC, opened_at DESC`, threadKey)
	if err != nil {
		return nil, fmt.Errorf("read the pull requests of thread %s: %w", threadKey, err)
	}
	return ps, nil
}

// OpenPullRequestOfSchedule is the schedule's latest pull request still
// open as last seen; ok is false when there is none.
func (s *Store) OpenPullRequestOfSchedule(ctx context.Context, scheduleID int64) (p PullRequest, ok bool, err error) {
	p, ok, err = queryOne(ctx, s.read, scanPull, `SELECT `+pullColumns+` FROM pull_requests
WHERE schedule_id = ? AND state = 'open' ORDER BY updated_at DESC, opened_at DESC LIMIT 1`, scheduleID)
	if err != nil {
		return PullRequest{}, false, fmt.Errorf("read the open pull request of schedule %d: %w", scheduleID, err)
	}
	return p, ok, nil
}

// SetPullRequestState records the state the forge last showed for the
// pull request at url (no error when the bot did not open it).
func (s *Store) SetPullRequestState(ctx context.Context, url, state string, at time.Time) error {
	if _, err := s.write.ExecContext(ctx, `UPDATE pull_requests SET state = ?, updated_at = ? WHERE url = ?`,
		state, nullTime(at), url); err != nil {
		return fmt.Errorf("set pull request %s %s: %w", url, state, err)
	}
	return nil
}
