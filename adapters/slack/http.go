package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// maxBody bounds one HTTP delivery.
const maxBody = 1 << 20

// HTTPHandler serves Slack's HTTP deliveries at one URL (mount it at
// /slack/events): Events API callbacks (url_verification included),
// interactivity (form field payload) and slash commands (form fields).
// Every request must carry a valid v0 signature made with the signing
// secret over the raw body, with a timestamp at most 5 minutes old; the
// comparison is constant-time. An event is answered 200 only once the bot
// has recorded it, else 500 so that Slack delivers it again.
func (a *Adapter) HTTPHandler() http.Handler {
	return http.HandlerFunc(a.serveHTTP)
}

func (a *Adapter) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if a.cfg.SigningSecret == "" {
		http.Error(w, "HTTP mode is not configured", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	sv, err := slack.NewSecretsVerifier(r.Header, a.cfg.SigningSecret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		// Missing, stale (> 5 min) or wrong signature.
		a.log.Warn("slack: refused an unsigned or badly signed request", "err", err, "remote", r.RemoteAddr)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	select {
	case <-a.ready:
	case <-r.Context().Done():
		return
	}
	ctx := r.Context()
	ct := r.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		if p := form.Get("payload"); p != "" {
			var cb slack.InteractionCallback
			if err := json.Unmarshal([]byte(p), &cb); err != nil {
				http.Error(w, "bad payload", http.StatusBadRequest)
				return
			}
			a.onInteraction(ctx, cb)
			w.WriteHeader(http.StatusOK)
			return
		}
		if form.Get("command") != "" {
			cmd := slack.SlashCommand{
				Command: form.Get("command"), Text: form.Get("text"), UserID: form.Get("user_id"), UserName: form.Get("user_name"),
				ChannelID: form.Get("channel_id"), TeamID: form.Get("team_id"), TriggerID: form.Get("trigger_id"), ResponseURL: form.Get("response_url"),
			}
			// Answer within 3 s; the work goes on after.
			go a.onSlash(context.WithoutCancel(ctx), cmd)
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, "unknown form", http.StatusBadRequest)
		return
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	if ev.Type == slackevents.URLVerification {
		var uv slackevents.ChallengeResponse
		if err := json.Unmarshal(body, &uv); err != nil {
			http.Error(w, "bad challenge", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.Copy(w, bytes.NewReader([]byte(uv.Challenge)))
		return
	}
	if err := a.onEventsAPI(ctx, ev); err != nil {
		if errors.Is(err, context.Canceled) {
			return
		}
		a.log.Warn("slack: event not recorded; asking for redelivery", "err", err)
		http.Error(w, "not recorded", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}
