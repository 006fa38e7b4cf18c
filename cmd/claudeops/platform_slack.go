package main

import (
	"fmt"

	"github.com/claudeops/claudeops/adapters"
	slackadapter "github.com/claudeops/claudeops/adapters/slack"
)

// slackPlatform is Slack: Socket Mode and/or the HTTP Events API.
type slackPlatform struct{ slackadapter.Config }

func (p *slackPlatform) configured() bool {
	return p.BotToken != "" || p.AppToken != "" || p.SigningSecret != ""
}

func (p *slackPlatform) checks() []problem {
	return []problem{
		httpURL("SLACK_API_URL", p.APIURL),
		offOrAbove0("CLAUDEOPS_CATCH_UP", p.CatchUp, "Slack catch-up off"),
	}
}

func (p *slackPlatform) startChecks(c config) []problem {
	var bad []problem
	if p.BotToken == "" {
		bad = append(bad, problem{want: "SLACK_BOT_TOKEN is required with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET: want the Bot User OAuth Token (xoxb-…)"})
	}
	if p.AppToken == "" && p.SigningSecret == "" {
		bad = append(bad, problem{want: "SLACK_BOT_TOKEN is set but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (HTTP Events API) is"})
	}
	if p.SigningSecret != "" && c.HTTPAddr == "" {
		bad = append(bad, problem{want: "SLACK_SIGNING_SECRET is set but CLAUDEOPS_HTTP_ADDR is not: nowhere to receive Slack's HTTP deliveries"})
	}
	return bad
}

// build makes the adapter, which reads back on connect what was posted
// while the bot was away (its state in the store: slackstate.go).
func (p *slackPlatform) build(w wiring) (adapters.Adapter, error) {
	cfg := p.Config
	cfg.Logger = w.log
	sl, err := slackadapter.New(cfg)
	if err != nil {
		return nil, settingsError{fmt.Errorf("slack configuration: %w", err)}
	}
	sl.SetCatchUpState(slackState{w.st}, func(channel, user string) bool { return w.b.MayUse(slackadapter.Platform, channel, user) })
	return sl, nil
}
