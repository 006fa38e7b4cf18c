package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/claudeops/claudeops/adapters"
)

// Defaults of the HTTP mode limits (Config.HTTPHeaderTimeout, ...). Slack
// sends a delivery in one go and wants an answer within 3 s: a client
// that takes longer than this to send one is not Slack.
const (
	defaultHeaderTimeout = 10 * time.Second
	defaultBodyTimeout   = 10 * time.Second
	defaultMaxBody       = 1 << 20
)

// signatureWindow is how far a request's timestamp may be from now for its
// signature to be accepted (slack-go's SecretsVerifier: 5 minutes, either
// way), plus a margin for clock steps.
const signatureWindow = 5*time.Minute + time.Minute

func (a *Adapter) headerTimeout() time.Duration {
	return orDefault(a.cfg.HTTPHeaderTimeout, defaultHeaderTimeout)
}

func (a *Adapter) bodyTimeout() time.Duration {
	return orDefault(a.cfg.HTTPBodyTimeout, defaultBodyTimeout)
}

func (a *Adapter) maxBody() int64 {
	if a.cfg.HTTPMaxBody > 0 {
		return a.cfg.HTTPMaxBody
	}
	return defaultMaxBody
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// ConfigureServer sets the timeouts of the server HTTPHandler runs in, so
// that a client sending its headers or body a byte at a time (slowloris)
// is cut off: headers within HTTPHeaderTimeout, the whole request within
// that plus HTTPBodyTimeout; an idle keep-alive connection is closed after
// the same time. HTTPHandler bounds the body's read by itself too.
func (a *Adapter) ConfigureServer(srv *http.Server) {
	srv.ReadHeaderTimeout = a.headerTimeout()
	srv.ReadTimeout = a.headerTimeout() + a.bodyTimeout()
	if srv.IdleTimeout <= 0 {
		srv.IdleTimeout = srv.ReadTimeout
	}
}

// HTTPHandler serves Slack's HTTP deliveries at one URL (mount it at
// /slack/events): Events API callbacks (url_verification included),
// interactivity (form field payload) and slash commands (form fields).
// Every request must carry a valid v0 signature made with the signing
// secret over the raw body, with a timestamp at most 5 minutes old; the
// comparison is constant-time. A signed request is handled once: the same
// timestamp and signature again (a replay of a captured request) is
// answered 200 and dropped. The body is read within HTTPBodyTimeout and
// up to HTTPMaxBody. An event is answered 200 only once the bot has
// recorded it, else 500 so that Slack delivers it again.
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
	body, status, err := a.readBody(w, r)
	if err != nil {
		a.log.Warn("slack: HTTP request body not read", "err", err, "remote", r.RemoteAddr)
		http.Error(w, http.StatusText(status), status)
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
	key := r.Header.Get("X-Slack-Request-Timestamp") + ":" + r.Header.Get("X-Slack-Signature")
	if !a.replays.claim(key, r.Header.Get("X-Slack-Request-Timestamp"), time.Now()) {
		// Slack signs every delivery afresh (its retries come seconds or
		// minutes later): the same signature twice is a replay.
		a.log.Warn("slack: dropped a replayed request", "remote", r.RemoteAddr)
		w.WriteHeader(http.StatusOK)
		return
	}
	select {
	case <-a.ready:
	case <-r.Context().Done():
		a.replays.release(key)
		return
	}
	if !a.dispatchHTTP(w, r, body) {
		// Not handled (a bad payload, an event not recorded): Slack may
		// send it again with this very signature.
		a.replays.release(key)
	}
}

// readBody reads the body within the body timeout and size limit; on
// failure it returns the status to answer. A deadline passed or a limit
// hit also makes the server close the connection.
func (a *Adapter) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	// Not every ResponseWriter supports deadlines (ErrNotSupported): the
	// server's ReadTimeout (ConfigureServer) still applies then.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(a.bodyTimeout()))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.maxBody()))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, err
	case err != nil:
		return nil, http.StatusRequestTimeout, err
	}
	return body, 0, nil
}

// dispatchHTTP handles a verified request; it reports whether it did (the
// answer is written either way).
func (a *Adapter) dispatchHTTP(w http.ResponseWriter, r *http.Request, body []byte) bool {
	ctx := r.Context()
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return a.dispatchForm(ctx, w, body)
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return false
	}
	if ev.Type == slackevents.URLVerification {
		var uv slackevents.ChallengeResponse
		if err := json.Unmarshal(body, &uv); err != nil {
			http.Error(w, "bad challenge", http.StatusBadRequest)
			return false
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.Copy(w, bytes.NewReader([]byte(uv.Challenge)))
		return true
	}
	if err := a.onEventsAPI(ctx, ev); err != nil {
		if errors.Is(err, context.Canceled) {
			return false
		}
		a.log.Log(ctx, adapters.DeliverLevel(err), "slack: event not recorded; asking for redelivery", "err", err)
		http.Error(w, "not recorded", http.StatusInternalServerError)
		return false
	}
	w.WriteHeader(http.StatusOK)
	return true
}

// dispatchForm handles interactivity (payload=<json>) and slash commands.
func (a *Adapter) dispatchForm(ctx context.Context, w http.ResponseWriter, body []byte) bool {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return false
	}
	if p := form.Get("payload"); p != "" {
		var cb slack.InteractionCallback
		if err := json.Unmarshal([]byte(p), &cb); err != nil {
			http.Error(w, "bad payload", http.StatusBadRequest)
			return false
		}
		a.onInteraction(ctx, cb)
		w.WriteHeader(http.StatusOK)
		return true
	}
	if form.Get("command") != "" {
		cmd := slack.SlashCommand{
			Command: form.Get("command"), Text: form.Get("text"), UserID: form.Get("user_id"), UserName: form.Get("user_name"),
			ChannelID: form.Get("channel_id"), TeamID: form.Get("team_id"), TriggerID: form.Get("trigger_id"), ResponseURL: form.Get("response_url"),
		}
		// Answer within 3 s; the work goes on after.
		go a.onSlash(context.WithoutCancel(ctx), cmd)
		w.WriteHeader(http.StatusOK)
		return true
	}
	http.Error(w, "unknown form", http.StatusBadRequest)
	return false
}

// replayGuard remembers the signed requests handled (or being handled)
// while their signatures could still be accepted. Only validly signed
// requests get here, so its size is bounded by what Slack sends in the
// signature window.
type replayGuard struct {
	mu   sync.Mutex
	seen map[string]time.Time // key → when it can be forgotten
}

// claim records key, signed at timestamp ts (unix seconds); false if it
// was already there.
func (g *replayGuard) claim(key, ts string, now time.Time) bool {
	sec, _ := strconv.ParseInt(ts, 10, 64)
	until := time.Unix(sec, 0).Add(signatureWindow)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = make(map[string]time.Time)
	}
	for k, t := range g.seen {
		if now.After(t) {
			delete(g.seen, k)
		}
	}
	if _, dup := g.seen[key]; dup {
		return false
	}
	g.seen[key] = until
	return true
}

// release forgets key: its request was not handled.
func (g *replayGuard) release(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.seen, key)
}
