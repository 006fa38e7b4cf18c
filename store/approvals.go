package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Approval is a permission request or a question put to people in a thread,
// and its decision.
type Approval struct {
	ID                                                string // opaque, primary key; what a button carries
	RequestID, ThreadKey, ChannelKey, SessionID, Tool string
	Input                                             string // the tool input, full JSON
	InputDigest                                       string // sha256 hex of Input; SaveApproval computes it if empty
	AskedBy                                           string
	Kind                                              string // "tool" or "question"
	State                                             string // pending, allowed, denied, expired, cancelled
	DecidedBy, Choice, Scope, Reason                  string
	PromptRef                                         string // the adapter's message ref, to edit the prompt after a restart
	// ToolRef is the platform's ref of the call's tool line, and ToolDepth
	// its nesting: a restart shows the line's final state too.
	ToolRef              string
	ToolDepth            int
	CreatedAt, ExpiresAt time.Time
	DecidedAt            time.Time // zero while pending
}

const approvalColumns = `id, request_id, thread_key, channel_key, session_id, tool, input, input_digest,
	asked_by, kind, state, decided_by, choice, scope, reason, prompt_ref,
	created_at, expires_at, decided_at, tool_ref, tool_depth`

func scanApproval(r scanner) (Approval, error) {
	var a Approval
	var created, expires, decided sql.NullInt64
	err := r.Scan(&a.ID, &a.RequestID, &a.ThreadKey, &a.ChannelKey, &a.SessionID, &a.Tool, &a.Input, &a.InputDigest,
		&a.AskedBy, &a.Kind, &a.State, &a.DecidedBy, &a.Choice, &a.Scope, &a.Reason, &a.PromptRef,
		&created, &expires, &decided, &a.ToolRef, &a.ToolDepth)
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = timeOf(created), timeOf(expires), timeOf(decided)
	return a, err
}

// InputDigest is the sha256 of input in hex, as SaveApproval computes it.
func InputDigest(input string) string {
	sum := sha256.Sum256([]byte(input))
	return hex.EncodeToString(sum[:])
}

// SaveApproval inserts a or replaces every field of the approval with a's ID.
// Once other goroutines or processes may decide the approval, change it only
// with DecideApproval and SetApprovalShown, which cannot undo a decision.
func (s *Store) SaveApproval(ctx context.Context, a Approval) error {
	if a.InputDigest == "" {
		a.InputDigest = InputDigest(a.Input)
	}
	_, err := s.write.ExecContext(ctx, `
INSERT INTO approvals (`+approvalColumns+`)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	request_id = excluded.request_id,
	thread_key = excluded.thread_key,
	channel_key = excluded.channel_key,
	session_id = excluded.session_id,
	tool = excluded.tool,
	input = excluded.input,
	input_digest = excluded.input_digest,
	asked_by = excluded.asked_by,
	kind = excluded.kind,
	state = excluded.state,
	decided_by = excluded.decided_by,
	choice = excluded.choice,
	scope = excluded.scope,
	reason = excluded.reason,
	prompt_ref = excluded.prompt_ref,
	created_at = excluded.created_at,
	expires_at = excluded.expires_at,
	decided_at = excluded.decided_at,
	tool_ref = excluded.tool_ref,
	tool_depth = excluded.tool_depth`,
		a.ID, a.RequestID, a.ThreadKey, a.ChannelKey, a.SessionID, a.Tool, a.Input, a.InputDigest,
		a.AskedBy, a.Kind, a.State, a.DecidedBy, a.Choice, a.Scope, a.Reason, a.PromptRef,
		nullTime(a.CreatedAt), nullTime(a.ExpiresAt), nullTime(a.DecidedAt), a.ToolRef, a.ToolDepth)
	if err != nil {
		return fmt.Errorf("save approval %s: %w", a.ID, err)
	}
	return nil
}

// GetApproval returns the approval with id; ok is false if there is none.
func (s *Store) GetApproval(ctx context.Context, id string) (a Approval, ok bool, err error) {
	a, ok, err = queryOne(ctx, s.read, scanApproval,
		`SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id)
	if err != nil {
		return Approval{}, false, fmt.Errorf("get approval %s: %w", id, err)
	}
	return a, ok, nil
}

// PendingApprovals returns the approvals in state "pending", oldest first:
// after a restart, the ones to show as expired.
func (s *Store) PendingApprovals(ctx context.Context) ([]Approval, error) {
	// The literal 'pending' (not a parameter) lets SQLite use the partial index.
	as, err := queryAll(ctx, s.read, scanApproval,
		`SELECT `+approvalColumns+` FROM approvals WHERE state = 'pending' ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("pending approvals: %w", err)
	}
	return as, nil
}

// DecideApproval is a compare-and-set: if the approval with id is in state
// fromState, it sets State, DecidedBy, Choice, Scope, Reason and DecidedAt
// from a (other fields of a are ignored) and reports true. If the approval is
// in another state — someone decided first, or it expired — it changes
// nothing and reports false. Of concurrent calls with the same fromState,
// exactly one reports true. It wraps ErrNotFound if there is no such approval.
func (s *Store) DecideApproval(ctx context.Context, id, fromState string, a Approval) (bool, error) {
	res, err := s.write.ExecContext(ctx, `
UPDATE approvals SET state = ?, decided_by = ?, choice = ?, scope = ?, reason = ?, decided_at = ?
WHERE id = ? AND state = ?`,
		a.State, a.DecidedBy, a.Choice, a.Scope, a.Reason, nullTime(a.DecidedAt), id, fromState)
	if err != nil {
		return false, fmt.Errorf("decide approval %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("decide approval %s: %w", id, err)
	}
	if n == 1 {
		return true, nil
	}
	// Lost, or absent? Approvals are never deleted, so this later read cannot
	// mistake a present approval for an absent one.
	var one int
	err = s.read.QueryRowContext(ctx, `SELECT 1 FROM approvals WHERE id = ?`, id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, fmt.Errorf("decide approval %s: %w", id, ErrNotFound)
	case err != nil:
		return false, fmt.Errorf("decide approval %s: %w", id, err)
	}
	return false, nil
}

// SetApprovalShown records where the approval is shown, whatever its
// state, leaving every other field alone: the adapter's ref of the prompt,
// and the platform's ref of the call's tool line ("" when it has none)
// with its depth. It wraps ErrNotFound if there is no such approval.
func (s *Store) SetApprovalShown(ctx context.Context, id, promptRef, toolRef string, toolDepth int) error {
	res, err := s.write.ExecContext(ctx, `UPDATE approvals SET prompt_ref = ?, tool_ref = ?, tool_depth = ? WHERE id = ?`,
		promptRef, toolRef, toolDepth, id)
	if err != nil {
		return fmt.Errorf("set where approval %s is shown: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("set where approval %s is shown: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("set where approval %s is shown: %w", id, ErrNotFound)
	}
	return nil
}
