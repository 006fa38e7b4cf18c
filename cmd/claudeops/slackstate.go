package main

import (
	"context"
	"time"

	"github.com/claudeops/claudeops/adapters"
	slackadapter "github.com/claudeops/claudeops/adapters/slack"
	"github.com/claudeops/claudeops/store"
)

// slackState gives the Slack adapter's catch-up what it needs of the bot's
// database (threads, received_messages; its read positions as sync cursors),
// so that the adapter need not import store.
type slackState struct{ st *store.Store }

// catchUpAccount prefixes the sync cursors that hold catch-up's positions.
const catchUpAccount = "catch-up/"

func (s slackState) ActiveThreads(ctx context.Context, since time.Time) ([]slackadapter.ActiveThread, error) {
	ts, err := s.st.ThreadsActiveSince(ctx, slackadapter.Platform, since)
	if err != nil {
		return nil, err
	}
	out := make([]slackadapter.ActiveThread, 0, len(ts))
	for _, t := range ts {
		out = append(out, slackadapter.ActiveThread{Channel: t.Channel, ThreadTS: t.ThreadID, LastActive: t.LastActivity})
	}
	return out, nil
}

// Handled reads the channel's messages by their ids (team/channel/ts): the
// range after team/channel/afterTS up to the end of that channel's ids ('0'
// follows '/').
func (s slackState) Handled(ctx context.Context, team, channel, afterTS string) ([]slackadapter.HandledMessage, error) {
	prefix := team + "/" + channel
	ms, err := s.st.ReceivedBetween(ctx, slackadapter.Platform, prefix+"/"+afterTS, prefix+"0")
	if err != nil {
		return nil, err
	}
	out := make([]slackadapter.HandledMessage, 0, len(ms))
	for _, m := range ms {
		h := slackadapter.HandledMessage{ID: m.Key, ReceivedAt: m.ReceivedAt}
		if ref, ok := adapters.ThreadKey(m.ThreadKey).Ref(); ok {
			h.ThreadTS = ref.Thread
		}
		out = append(out, h)
	}
	return out, nil
}

func (s slackState) Position(ctx context.Context, key string) (string, error) {
	c, err := s.st.SyncCursor(ctx, slackadapter.Platform, catchUpAccount+key)
	return c.NextBatch, err
}

func (s slackState) SavePosition(ctx context.Context, key, ts string, at time.Time) error {
	return s.st.SaveSyncCursor(ctx, slackadapter.Platform, catchUpAccount+key, store.SyncCursor{NextBatch: ts}, at)
}

func (s slackState) ForgetPositions(ctx context.Context, cutoff time.Time) error {
	_, err := s.st.DeleteSyncCursorsBefore(ctx, slackadapter.Platform, catchUpAccount, cutoff)
	return err
}
