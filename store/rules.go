package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Rule is a persisted permission rule.
type Rule struct {
	ID        int64
	Scope     string // global, channel, thread
	ScopeKey  string // the channel or thread key; empty for global
	Effect    string // allow, deny
	Tool      string
	Pattern   string
	CreatedBy string
	CreatedAt time.Time
}

func scanRule(r scanner) (Rule, error) {
	var ru Rule
	var created sql.NullInt64
	err := r.Scan(&ru.ID, &ru.Scope, &ru.ScopeKey, &ru.Effect, &ru.Tool, &ru.Pattern, &ru.CreatedBy, &created)
	ru.CreatedAt = timeOf(created)
	return ru, err
}

// AddRule stores r (its ID is ignored) and returns the new rule's ID. IDs are
// never reused, so a stale "rules rm <id>" cannot remove a newer rule.
func (s *Store) AddRule(ctx context.Context, r Rule) (int64, error) {
	res, err := s.write.ExecContext(ctx, `
INSERT INTO rules (scope, scope_key, effect, tool, pattern, created_by, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.Scope, r.ScopeKey, r.Effect, r.Tool, r.Pattern, r.CreatedBy, nullTime(r.CreatedAt))
	if err != nil {
		return 0, fmt.Errorf("add rule %s %s(%s): %w", r.Effect, r.Tool, r.Pattern, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("add rule %s %s(%s): %w", r.Effect, r.Tool, r.Pattern, err)
	}
	return id, nil
}

// DeleteRule deletes the rule with id and reports whether there was one.
func (s *Store) DeleteRule(ctx context.Context, id int64) (bool, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM rules WHERE id = ?`, id)
	if err != nil {
		return false, fmt.Errorf("delete rule %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("delete rule %d: %w", id, err)
	}
	return n == 1, nil
}

// Rules returns every rule, by ID.
func (s *Store) Rules(ctx context.Context) ([]Rule, error) {
	rs, err := queryAll(ctx, s.read, scanRule, `
SELECT id, scope, scope_key, effect, tool, pattern, created_by, created_at FROM rules ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list rules: %w", err)
	}
	return rs, nil
}

// AuditEntry is one decision or refused attempt.
type AuditEntry struct {
	ID                                        int64
	At                                        time.Time
	ThreadKey, UserID, Action, Target, Detail string
	Allowed                                   bool
}

func scanAudit(r scanner) (AuditEntry, error) {
	var e AuditEntry
	var at sql.NullInt64
	err := r.Scan(&e.ID, &at, &e.ThreadKey, &e.UserID, &e.Action, &e.Target, &e.Detail, &e.Allowed)
	e.At = timeOf(at)
	return e, err
}

// Audit appends e (its ID is ignored) to the audit log.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	_, err := s.write.ExecContext(ctx, `
INSERT INTO audit (at, thread_key, user_id, action, target, detail, allowed)
VALUES (?, ?, ?, ?, ?, ?, ?)`,
		nullTime(e.At), e.ThreadKey, e.UserID, e.Action, e.Target, e.Detail, e.Allowed)
	if err != nil {
		return fmt.Errorf("audit %s %s by %s: %w", e.Action, e.Target, e.UserID, err)
	}
	return nil
}

// AuditLog returns up to limit entries (all if limit <= 0), newest first (by
// At, then by insertion); threadKey "" means every thread.
func (s *Store) AuditLog(ctx context.Context, threadKey string, limit int) ([]AuditEntry, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	const cols = `SELECT id, at, thread_key, user_id, action, target, detail, allowed FROM audit `
	var (
		es  []AuditEntry
		err error
	)
	if threadKey == "" {
		es, err = queryAll(ctx, s.read, scanAudit, cols+`ORDER BY at DESC, id DESC LIMIT ?`, limit)
	} else {
		es, err = queryAll(ctx, s.read, scanAudit,
			cols+`WHERE thread_key = ? ORDER BY at DESC, id DESC LIMIT ?`, threadKey, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("audit log %q: %w", threadKey, err)
	}
	return es, nil
}
