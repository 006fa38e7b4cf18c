package fakeslack

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HTTPOpt modifies a request of SendHTTP.
type HTTPOpt func(*httpReq)

type httpReq struct {
	ts           time.Time
	badSignature bool
	noSignature  bool
	retryNum     int
	retryReason  string
	headers      http.Header
}

// BadSignature signs with the wrong secret.
func BadSignature() HTTPOpt { return func(r *httpReq) { r.badSignature = true } }

// NoSignature leaves out X-Slack-Signature and X-Slack-Request-Timestamp.
func NoSignature() HTTPOpt { return func(r *httpReq) { r.noSignature = true } }

// StaleTimestamp signs correctly but with a timestamp 6 minutes old (Slack's
// verification rejects anything older than 5).
func StaleTimestamp() HTTPOpt {
	return func(r *httpReq) { r.ts = time.Now().Add(-6 * time.Minute) }
}

// Timestamp signs with timestamp t.
func Timestamp(t time.Time) HTTPOpt { return func(r *httpReq) { r.ts = t } }

// Retry adds X-Slack-Retry-Num: n and X-Slack-Retry-Reason: reason
// (http_timeout, http_error, connection_failed, ...).
func Retry(n int, reason string) HTTPOpt {
	return func(r *httpReq) { r.retryNum, r.retryReason = n, reason }
}

// Header sets a request header.
func Header(key, value string) HTTPOpt { return func(r *httpReq) { r.headers.Set(key, value) } }

// Sign returns the X-Slack-Signature of body at timestamp ts:
// "v0=" + hex(HMAC-SHA256(secret, "v0:" + ts + ":" + body)).
func Sign(secret string, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// httpBody encodes a payload as Slack posts it: events as a JSON body,
// interactivity as form payload=<json>, slash commands as form fields.
func httpBody(envelopeType string, payload []byte) ([]byte, string, error) {
	switch envelopeType {
	case "interactive":
		return []byte(url.Values{"payload": {string(payload)}}.Encode()), "application/x-www-form-urlencoded", nil
	case "slash_commands":
		var fields map[string]any
		if err := json.Unmarshal(payload, &fields); err != nil {
			return nil, "", fmt.Errorf("fakeslack: slash command payload must be a JSON object: %w", err)
		}
		v := url.Values{}
		for k, f := range fields {
			if s, ok := f.(string); ok {
				v.Set(k, s)
			} else {
				b, _ := json.Marshal(f)
				v.Set(k, string(b))
			}
		}
		return []byte(v.Encode()), "application/x-www-form-urlencoded", nil
	default:
		return payload, "application/json", nil
	}
}

// SendHTTP posts payload to targetURL as Slack's HTTP delivery would, signed
// with SigningSecret: envelopeType "events_api" (also for url_verification)
// as a JSON body, "interactive" as form payload=<json>, "slash_commands" (a
// JSON object of the fields) as form fields. The caller closes the body.
func (s *Server) SendHTTP(targetURL, envelopeType string, payload []byte, opts ...HTTPOpt) (*http.Response, error) {
	body, ct, err := httpBody(envelopeType, payload)
	if err != nil {
		return nil, err
	}
	o := &httpReq{ts: time.Now(), headers: http.Header{}}
	for _, opt := range opts {
		opt(o)
	}
	return s.postSigned(s.ctx, envelopeType, targetURL, body, ct, o)
}

// signedReq is an HTTP delivery as sent, kept for ReplayHTTP.
type signedReq struct {
	target string
	header http.Header
	body   []byte
}

// ReplayHTTP sends the last HTTP delivery of envelopeType ("events_api",
// "interactive", "slash_commands") again, byte for byte: same body, same
// X-Slack-Request-Timestamp and X-Slack-Signature. It is what someone who
// captured a request (a proxy log, a leaky load balancer) can do within
// the 5 minutes the signature stays fresh. The caller closes the body.
func (s *Server) ReplayHTTP(envelopeType string) (*http.Response, error) {
	s.mu.Lock()
	r, ok := s.lastHTTP[envelopeType]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("fakeslack: no HTTP delivery of %s to replay", envelopeType)
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, r.target, bytes.NewReader(r.body))
	if err != nil {
		return nil, err
	}
	req.Header = r.header.Clone()
	return s.client.Do(req)
}

func (s *Server) postSigned(ctx context.Context, envelopeType, target string, body []byte, ct string, o *httpReq) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	if !o.noSignature {
		ts := strconv.FormatInt(o.ts.Unix(), 10)
		secret := s.Opts.SigningSecret
		if o.badSignature {
			secret += "-wrong"
		}
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", Sign(secret, ts, body))
	}
	if o.retryNum > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(o.retryNum))
		req.Header.Set("X-Slack-Retry-Reason", o.retryReason)
	}
	for k, v := range o.headers {
		req.Header[k] = v
	}
	s.mu.Lock()
	s.lastHTTP[envelopeType] = signedReq{target: target, header: req.Header.Clone(), body: append([]byte(nil), body...)}
	s.mu.Unlock()
	return s.client.Do(req)
}

// VerifyURL sends a url_verification (events_api_url_verification.json) to
// targetURL and checks that the answer carries the challenge, as Slack does
// when the Request URL is saved.
func (s *Server) VerifyURL(targetURL string) error {
	challenge := randAlnum(52)
	payload, _ := json.Marshal(map[string]string{"token": s.Opts.VerificationToken, "challenge": challenge, "type": "url_verification"})
	resp, err := s.SendHTTP(targetURL, "events_api", payload)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fakeslack: url_verification answered %d: %s", resp.StatusCode, b)
	}
	var j struct {
		Challenge string `json:"challenge"`
	}
	if strings.TrimSpace(string(b)) == challenge || (json.Unmarshal(b, &j) == nil && j.Challenge == challenge) {
		return nil
	}
	return fmt.Errorf("fakeslack: url_verification answer %q does not carry the challenge", b)
}

// httpDeliver delivers e over HTTP: events are retried up to 3 times when
// not answered 2xx within HTTPTimeout (X-Slack-No-Retry: 1 stops that);
// interactivity and slash commands are not retried (a failure is a Violation).
func (s *Server) httpDeliver(e *envelope, target string) {
	defer s.wg.Done()
	var body []byte
	var ct string
	if e.Type == "slash_commands" && e.form != nil {
		v := url.Values{}
		for k, f := range e.form {
			v.Set(k, f)
		}
		body, ct = []byte(v.Encode()), "application/x-www-form-urlencoded"
	} else {
		var err error
		if body, ct, err = httpBody(e.Type, e.Payload); err != nil {
			s.violatef("HTTP delivery of %s: %v", e.Type, err)
			return
		}
	}
	reason := ""
	for attempt := 0; attempt <= 3; attempt++ {
		if attempt > 0 && e.Type != "events_api" {
			return
		}
		o := &httpReq{ts: time.Now(), headers: http.Header{}}
		if attempt > 0 {
			o.retryNum, o.retryReason = attempt, reason
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.Opts.HTTPTimeout)
		start := time.Now()
		resp, err := s.postSigned(ctx, e.Type, target, body, ct, o)
		var answer []byte
		status := 0
		if err == nil {
			answer, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			status = resp.StatusCode
		}
		cancel()
		if s.ctx.Err() != nil {
			return
		}

		s.mu.Lock()
		rec := e
		if attempt > 0 {
			rec = &envelope{Envelope: Envelope{Type: e.Type, EventID: e.EventID, EventType: e.EventType, Payload: e.Payload, RetryAttempt: attempt, RetryReason: reason, Via: "http"}}
			s.envelopes = append(s.envelopes, rec)
		}
		rec.DeliveredAt, rec.Status = start, status
		ok := err == nil && status >= 200 && status < 300
		if ok {
			rec.Acked, rec.AckedAt = true, time.Now()
			if len(bytes.TrimSpace(answer)) > 0 {
				rec.AckPayload = answer
			}
			if e.Type == "slash_commands" && e.resp != nil && len(bytes.TrimSpace(answer)) > 0 {
				s.slashHTTPAnswerLocked(e, resp.Header.Get("Content-Type"), answer)
			}
		}
		s.notifyLocked()
		switch {
		case ok:
			s.mu.Unlock()
			return
		case e.Type != "events_api":
			s.violateLocked("HTTP %s delivery (%s) failed: status %d, err %v: the user sees an error", e.Type, e.what, status, err)
			s.mu.Unlock()
			return
		case err == nil && resp.Header.Get("X-Slack-No-Retry") == "1":
			s.mu.Unlock()
			return
		case attempt == 3:
			s.violateLocked("event %s (%s) never answered 2xx over HTTP: 4 deliveries", e.EventID, e.EventType)
		}
		s.mu.Unlock()
		switch {
		case errors.Is(err, context.DeadlineExceeded) || (err != nil && strings.Contains(err.Error(), "Timeout")):
			reason = "http_timeout"
		case err != nil:
			reason = "connection_failed"
		default:
			reason = "http_error"
		}
	}
}

func (s *Server) slashHTTPAnswerLocked(e *envelope, contentType string, answer []byte) {
	ct, _, _ := mime.ParseMediaType(contentType)
	var body map[string]any
	if ct == "application/json" {
		if err := json.Unmarshal(answer, &body); err != nil {
			s.violateLocked("slash command answer is not JSON: %v", err)
			return
		}
	} else {
		body = map[string]any{"text": string(answer)}
	}
	if _, code := s.respondLocked(e.resp, body); code != "" {
		s.violateLocked("slash command answer rejected: %s", code)
	}
}
