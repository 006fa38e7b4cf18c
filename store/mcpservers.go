package store

import (
	"context"
	"fmt"
	"time"
)

// ChannelMCPServers are the names of the operator's MCP servers an admin
// gave the channel key, sorted.
func (s *Store) ChannelMCPServers(ctx context.Context, key string) ([]string, error) {
	names, err := queryAll(ctx, s.read, func(r scanner) (string, error) {
		var n string
		return n, r.Scan(&n)
	}, `SELECT name FROM channel_mcp_servers WHERE channel_key = ? ORDER BY name`, key)
	if err != nil {
		return nil, fmt.Errorf("list the MCP servers of channel %s: %w", key, err)
	}
	return names, nil
}

// AddChannelMCPServer gives the channel key the server name; added is
// false when it had it already.
func (s *Store) AddChannelMCPServer(ctx context.Context, key, name, by string, at time.Time) (added bool, err error) {
	res, err := s.write.ExecContext(ctx, `
INSERT INTO channel_mcp_servers (channel_key, name, added_by, added_at) VALUES (?, ?, ?, ?)
ON CONFLICT (channel_key, name) DO NOTHING`, key, name, by, nullTime(at))
	if err != nil {
		return false, fmt.Errorf("give channel %s the MCP server %s: %w", key, name, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RemoveChannelMCPServer takes the server name from the channel key;
// removed is false when it did not have it.
func (s *Store) RemoveChannelMCPServer(ctx context.Context, key, name string) (removed bool, err error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM channel_mcp_servers WHERE channel_key = ? AND name = ?`, key, name)
	if err != nil {
		return false, fmt.Errorf("take the MCP server %s from channel %s: %w", name, key, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
