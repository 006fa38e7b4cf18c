package triggers

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// verify says whether r's body was sent by someone holding t's secret.
//
//   - gitea: X-Gitea-Signature is the hex HMAC-SHA256 of the raw body,
//     keyed with the webhook's secret (Gitea's "Secret" field).
//   - github: X-Hub-Signature-256 is "sha256=" and the same hex HMAC.
//   - generic: Authorization is "Bearer <secret>".
//
// Each compares in constant time; a missing header is a failure.
func (t *Trigger) verify(r *http.Request, body []byte) bool {
	switch t.Kind {
	case KindGitea:
		return macOK(t.secret, body, r.Header.Get("X-Gitea-Signature"))
	case KindGitHub:
		sig, ok := strings.CutPrefix(r.Header.Get("X-Hub-Signature-256"), "sha256=")
		return ok && macOK(t.secret, body, sig)
	case KindGeneric:
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return ok && subtle.ConstantTimeCompare([]byte(tok), t.secret) == 1
	}
	return false
}

// macOK compares hexSig with the HMAC-SHA256 of body under key.
func macOK(key, body []byte, hexSig string) bool {
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	return hmac.Equal(got, Sign(key, body))
}

// Sign is the HMAC-SHA256 of body under key, as Gitea and GitHub sign a
// webhook's body.
func Sign(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return m.Sum(nil)
}

// delivery is the request's delivery id ("" when it has none).
func (t *Trigger) delivery(r *http.Request) string {
	var id string
	switch t.Kind {
	case KindGitea:
		id = r.Header.Get("X-Gitea-Delivery")
	case KindGitHub:
		id = r.Header.Get("X-GitHub-Delivery")
	default:
		id = r.Header.Get("X-Delivery-Id")
	}
	if len(id) > 128 {
		id = id[:128]
	}
	return id
}

// event is the forge's event type ("" for generic).
func (t *Trigger) event(r *http.Request) string {
	switch t.Kind {
	case KindGitea:
		return r.Header.Get("X-Gitea-Event")
	case KindGitHub:
		return r.Header.Get("X-GitHub-Event")
	}
	return ""
}
