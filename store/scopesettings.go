package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ScopeSetting is a setting given in chat at one scope: Level and ScopeKey
// are the settings package's (a level's number, a channel key), Value its
// canonical text.
type ScopeSetting struct {
	Level    int
	ScopeKey string
	Name     string
	Value    string
	SetBy    string
	SetAt    time.Time
}

// ScopeSettings lists every setting given in chat.
func (s *Store) ScopeSettings(ctx context.Context) ([]ScopeSetting, error) {
	out, err := queryAll(ctx, s.read, func(r scanner) (ScopeSetting, error) {
		var v ScopeSetting
		var at sql.NullInt64
		err := r.Scan(&v.Level, &v.ScopeKey, &v.Name, &v.Value, &v.SetBy, &at)
		v.SetAt = timeOf(at)
		return v, err
	}, `SELECT level, scope_key, name, value, set_by, set_at FROM scope_settings ORDER BY level, scope_key, name`)
	if err != nil {
		return nil, fmt.Errorf("list the settings set in chat: %w", err)
	}
	return out, nil
}

// SaveScopeSetting stores v, in place of the value it had at its scope.
func (s *Store) SaveScopeSetting(ctx context.Context, v ScopeSetting) error {
	_, err := s.write.ExecContext(ctx, `
INSERT INTO scope_settings (level, scope_key, name, value, set_by, set_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (level, scope_key, name) DO UPDATE SET value = excluded.value, set_by = excluded.set_by, set_at = excluded.set_at`,
		v.Level, v.ScopeKey, v.Name, v.Value, v.SetBy, nullTime(v.SetAt))
	if err != nil {
		return fmt.Errorf("save the setting %s of %s: %w", v.Name, v.ScopeKey, err)
	}
	return nil
}

// DeleteScopeSetting removes the value name had at a scope, if any.
func (s *Store) DeleteScopeSetting(ctx context.Context, level int, scopeKey, name string) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM scope_settings WHERE level = ? AND scope_key = ? AND name = ?`, level, scopeKey, name); err != nil {
		return fmt.Errorf("remove the setting %s of %s: %w", name, scopeKey, err)
	}
	return nil
}
