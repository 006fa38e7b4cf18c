package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/adapters/slack/slackmd"
)

// `/claude <text>` opens a new thread rooted at a message that says who
// asked, so the conversation has a place to live. That root is posted only
// once the bot has accepted the sender (adapters.Incoming.OpenThread): a
// person who may not use the bot puts nothing in the channel, and is told
// through the command's response_url, which only they see.

// Slack lets a response_url be used 5 times within 30 minutes (Slack's slash command docs).
const (
	responseURLTTL = 30 * time.Minute
	responsesCap   = 4096
)

// onSlash delivers `/claude <text>` as a message asking for its thread.
func (a *Adapter) onSlash(ctx context.Context, cmd slack.SlashCommand) {
	_, _, team, deliver := a.identity()
	text := strings.TrimSpace(cmd.Text)
	if text == "" {
		text = "help"
	}
	if cmd.ResponseURL != "" {
		a.responses.Put(responseKey(cmd.ChannelID, cmd.UserID), cmd.ResponseURL)
	}
	ev := adapters.Event{
		// No thread yet: a refusal is told in the channel, privately (Tell).
		Thread: adapters.ThreadRef{Platform: Platform, Channel: cmd.ChannelID},
		User:   adapters.User{ID: cmd.UserID, Name: cmd.UserName},
		Message: &adapters.Incoming{
			ID:        team + "/" + cmd.ChannelID + "/slash-" + cmd.TriggerID,
			Text:      text,
			Mentioned: true,
			OpenThread: func(ctx context.Context) (adapters.ThreadRef, error) {
				root := fmt.Sprintf("<@%s> asked: %s", cmd.UserID, slackmd.Text(text))
				ts, err := a.postMessage(ctx, cmd.ChannelID, slack.MsgOptionText(root, false))
				if err != nil {
					return adapters.ThreadRef{}, err
				}
				return adapters.ThreadRef{Platform: Platform, Channel: cmd.ChannelID, Thread: ts}, nil
			},
		},
	}
	if err := deliver(ctx, ev); err != nil {
		a.log.Warn("slack: slash command not delivered", "err", err)
	}
}

func responseKey(channel, user string) string { return channel + "|" + user }

// errNoThread: something meant for a thread addressed a channel alone (a
// slash command's before its thread is open). Nothing is posted for
// everyone to see in its place.
var errNoThread = errors.New("slack: no thread to post in")

// tellInChannel tells u something in channel before any thread exists:
// through the response_url of their last slash command there while it
// is good, else as an ephemeral message.
func (a *Adapter) tellInChannel(ctx context.Context, channel string, u adapters.User, text string) error {
	url, ok := a.responses.Get(responseKey(channel, u.ID))
	if !ok {
		return a.call(ctx, "chat.postEphemeral", channel, func(ctx context.Context) error {
			_, err := a.api.PostEphemeralContext(ctx, channel, u.ID, slack.MsgOptionText(text, false))
			return err
		})
	}
	// One answer per command: the next would need a command of its own.
	a.responses.Remove(responseKey(channel, u.ID))
	body, err := json.Marshal(map[string]string{"response_type": "ephemeral", "text": text})
	if err != nil {
		return err
	}
	return a.call(ctx, "response_url", channel, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := a.hc.Do(req)
		if err != nil {
			return fmt.Errorf("slack response_url: %w", err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("slack response_url: status %d", resp.StatusCode)
		}
		return nil
	})
}
