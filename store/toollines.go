package store

import (
	"context"
	"fmt"
)

// ToolLine is a tool call's line the bot shows running: recorded while the
// call runs, deleted when it ends, so that what is still recorded at the
// next start is a line a run that died left saying "running". Ref is the
// platform's message ref (adapters.MessageRef.String); Input is what the
// line shows of the call's input.
type ToolLine struct {
	Ref, ThreadKey, Tool, Input string
	Depth                       int
}

// RecordToolLine records l, or replaces the record with its Ref.
func (s *Store) RecordToolLine(ctx context.Context, l ToolLine) error {
	_, err := s.write.ExecContext(ctx, `INSERT OR REPLACE INTO tool_lines (ref, thread_key, tool, input, depth) VALUES (?, ?, ?, ?, ?)`,
		l.Ref, l.ThreadKey, l.Tool, l.Input, l.Depth)
	if err != nil {
		return fmt.Errorf("record tool line %s: %w", l.Ref, err)
	}
	return nil
}

// ForgetToolLine deletes the record of the line ref, if there is one.
func (s *Store) ForgetToolLine(ctx context.Context, ref string) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM tool_lines WHERE ref = ?`, ref); err != nil {
		return fmt.Errorf("forget tool line %s: %w", ref, err)
	}
	return nil
}

// ToolLines returns every recorded line, by thread.
func (s *Store) ToolLines(ctx context.Context) ([]ToolLine, error) {
	ls, err := queryAll(ctx, s.read, func(r scanner) (ToolLine, error) {
		var l ToolLine
		err := r.Scan(&l.Ref, &l.ThreadKey, &l.Tool, &l.Input, &l.Depth)
		return l, err
	}, `SELECT ref, thread_key, tool, input, depth FROM tool_lines ORDER BY thread_key, ref`)
	if err != nil {
		return nil, fmt.Errorf("tool lines: %w", err)
	}
	return ls, nil
}
