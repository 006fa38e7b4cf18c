package store

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestChannelMCPServers: each channel keeps its own servers; adding twice
// or removing what is not there changes nothing and says so.
func TestChannelMCPServers(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		op, key, name string
		ok            bool
	}{
		{"add", "slack/C1", "ops", true},
		{"add", "slack/C1", "docs", true},
		{"add", "slack/C1", "ops", false},
		{"add", "matrix/!r:hs", "ops", true},
		{"remove", "slack/C1", "ops", true},
		{"remove", "slack/C1", "ops", false},
		{"remove", "slack/C2", "docs", false},
	} {
		var ok bool
		var err error
		if step.op == "add" {
			ok, err = s.AddChannelMCPServer(ctx, step.key, step.name, "W1", at)
		} else {
			ok, err = s.RemoveChannelMCPServer(ctx, step.key, step.name)
		}
		if err != nil || ok != step.ok {
			t.Errorf("%s %s %s: %v, %v; want %v", step.op, step.key, step.name, ok, err, step.ok)
		}
	}
	for key, want := range map[string][]string{"slack/C1": {"docs"}, "matrix/!r:hs": {"ops"}, "slack/C2": nil} {
		got, err := s.ChannelMCPServers(ctx, key)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v, %v; want %v", key, got, err, want)
		}
	}
}
