package slack

import (
	"errors"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/claudeops/claudeops/adapters"
)

// ConnStatus implements adapters.ConnReporter: with an app token, the
// Socket Mode connection as slack-go's events report it; in HTTP mode
// alone, connected once auth.test has identified the bot (Slack then
// delivers to HTTPHandler).
func (a *Adapter) ConnStatus() adapters.ConnStatus { return a.conn.Status() }

// connVia says how the adapter receives events.
func connVia(cfg Config) string {
	switch {
	case cfg.AppToken != "" && cfg.SigningSecret != "":
		return "socket mode + http"
	case cfg.AppToken != "":
		return "socket mode"
	}
	return "http"
}

// noteSocket follows the Socket Mode connection through slack-go's events:
// connecting (each attempt; after a failure it stays disconnected while
// slack-go retries), connected, a connection error, Slack's request to
// reconnect, refused credentials.
func (a *Adapter) noteSocket(evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		if a.conn.State() != adapters.Disconnected {
			a.conn.Set(adapters.Connecting, nil)
		}
	case socketmode.EventTypeConnected:
		a.conn.Set(adapters.Connected, nil)
	case socketmode.EventTypeConnectionError:
		err := errors.New("socket mode connection failed")
		if ce, ok := evt.Data.(*slack.ConnectionErrorEvent); ok && ce.ErrorObj != nil {
			err = ce.ErrorObj
		}
		a.conn.Set(adapters.Disconnected, err)
	case socketmode.EventTypeDisconnect:
		a.conn.Set(adapters.Connecting, nil) // Slack asked for a new socket
	case socketmode.EventTypeInvalidAuth:
		a.conn.Set(adapters.Disconnected, errors.New("socket mode: invalid auth"))
	}
}
