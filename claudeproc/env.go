package claudeproc

import (
	"os"
	"slices"
	"strings"
)

// envPrefixes are the families of variables Claude Code itself reads.
var envPrefixes = []string{"ANTHROPIC_", "CLAUDE_CODE_", "DISABLE_", "LC_", "OTEL_"}

// envNames are single variables the CLI (or the tools it runs) needs.
var envNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY", "all_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"CLAUDE_CONFIG_DIR", "MAX_THINKING_TOKENS", "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS",
}

// secretPrefixes are never passed on, even when configuration names them:
// the bot's own chat credentials and settings stay with the bot.
var secretPrefixes = []string{"SLACK_", "MATRIX_", "CLAUDEOPS_"}

// BuildEnv returns the child environment: the entries of environ allowed by
// the allowlist (the variables Claude Code reads, PATH, HOME, locale,
// proxies) plus those named in extra (names, or prefixes ending in "*").
// Slack, Matrix and claudeops variables are never included.
func BuildEnv(environ []string, extra []string) []string {
	out := make([]string, 0, 16)
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if allowedEnv(name, extra) {
			out = append(out, kv)
		}
	}
	return out
}

func allowedEnv(name string, extra []string) bool {
	for _, p := range secretPrefixes {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	if slices.Contains(envNames, name) {
		return true
	}
	for _, p := range envPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, e := range extra {
		e = strings.TrimSpace(e)
		if p, ok := strings.CutSuffix(e, "*"); ok && p != "" && strings.HasPrefix(name, p) {
			return true
		}
		if e == name {
			return true
		}
	}
	return false
}

// environ is os.Environ, a variable for tests.
var environ = os.Environ
