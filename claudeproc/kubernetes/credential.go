package kubernetes

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// A Pod's spec, environment included, is readable by whoever may read Pods
// in the namespace, so no credential goes there: the model's credentials
// come from the operator's Secret (Config.Secret), and a variable that
// looks like one is left out of the spec unless the operator lists it in
// Config.PlainEnv as not one.

// credentialWords mark a variable whose value is a credential, or may
// carry one (extra HTTP headers: ANTHROPIC_CUSTOM_HEADERS,
// OTEL_EXPORTER_OTLP_HEADERS hold Authorization and API-key headers), as
// a part of its name between underscores or anywhere in it.
var credentialWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "AUTH", "COOKIE", "HEADERS", "PRIVATE", "SESSION", "DSN"}

// credentialParts are name parts (between underscores) that mark one.
var credentialParts = []string{"PAT", "PWD", "PASS", "CERT", "JWT", "OTP"}

// credentialValue is a value that holds a credential whatever its name:
// an Authorization header or bearer token, the shapes of common tokens
// (Anthropic, OpenAI, GitHub classic and fine-grained, GitLab, Slack bot,
// user and app tokens, AWS access keys, Google API keys, npm, PyPI,
// Hugging Face, Stripe, DigitalOcean, Docker Hub, a JWT, a PEM private
// key).
var credentialValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)authorization|bearer\s|api[-_]?key` +
		`|sk-ant-|\bsk-(proj-)?[A-Za-z0-9_-]{20,}` +
		`|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_-]{20,}` +
		`|\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-[A-Za-z0-9-]{10,}` +
		`|\b(AKIA|ASIA)[A-Z0-9]{16}\b|\bAIza[A-Za-z0-9_-]{30,}` +
		`|\bnpm_[A-Za-z0-9]{30,}|\bpypi-[A-Za-z0-9_-]{30,}|\bhf_[A-Za-z0-9]{30,}` +
		`|\b[sr]k_(live|test)_[A-Za-z0-9]{16,}|\bdop_v1_[a-f0-9]{40,}|\bdckr_pat_[A-Za-z0-9_-]{20,}` +
		`|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.|-----BEGIN [A-Z ]*PRIVATE KEY`)
})

// Credential reports whether a variable holds a credential by its name
// (ANTHROPIC_API_KEY, AWS_SECRET_ACCESS_KEY, GH_PAT, …), by its value (a
// known token shape, a URL with a password in it, as proxies and database
// URLs are given; an Authorization header), or because its value is one
// long random-looking word, as keys are.
func Credential(name, val string) bool {
	up := strings.ToUpper(name)
	for _, w := range credentialWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	for _, part := range strings.Split(up, "_") {
		for _, w := range credentialParts {
			if part == w {
				return true
			}
		}
	}
	if credentialValue().MatchString(val) || randomWord(strings.TrimSpace(val)) {
		return true
	}
	for _, field := range strings.Fields(val) {
		if u, err := url.Parse(field); err == nil && u.User != nil {
			if _, ok := u.User.Password(); ok {
				return true
			}
		}
	}
	return false
}

// randomWord reports whether s looks like a generated key: one word of at
// least 24 characters from a token alphabet, with upper- and lower-case
// letters and digits. Hex digests (commit ids) and words of a language do
// not have all three.
func randomWord(s string) bool {
	if len(s) < 24 {
		return false
	}
	var upper, lower, digit bool
	for _, c := range s {
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		case strings.ContainsRune("+/=_-.~", c):
		default:
			return false
		}
	}
	return upper && lower && digit
}
