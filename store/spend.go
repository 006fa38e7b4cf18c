package store

import (
	"context"
	"fmt"
)

// ThreadTurns returns a thread's turns, oldest first, finished or not:
// what each cost and how it ended, turn by turn (ThreadUsage sums them).
func (s *Store) ThreadTurns(ctx context.Context, threadKey string) ([]Turn, error) {
	ts, err := queryAll(ctx, s.read, scanTurn,
		`SELECT `+turnColumns+` FROM turns WHERE thread_key = ? ORDER BY id`, threadKey)
	if err != nil {
		return nil, fmt.Errorf("list the turns of thread %s: %w", threadKey, err)
	}
	return ts, nil
}
