package bot

import (
	"encoding/json"
	"path"
	"path/filepath"
	"strings"

	"github.com/claudeops/claudeops/approvals"
	"github.com/claudeops/claudeops/bot/mcptools"
	"github.com/claudeops/claudeops/internal/fspath"
)

// send_file shows a file's content to everyone in the thread. The
// built-in rule lets it run unasked, but not where a person would want to
// decide: a deny rule on reading the file denies posting it too, and a
// file that looks like a secret is asked about, one call at a time, as if
// the built-in rule were not there. (What the session cannot see at all,
// send_file refuses by itself: mcptools.Env.Hidden.)

// sendFilePath is the absolute path a send_file call names, "" when it
// names none the bot can read.
func sendFilePath(call approvals.Call) string {
	var in struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil || in.Path == "" || call.Cwd == "" {
		return ""
	}
	p := in.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(call.Cwd, p)
	}
	return filepath.Clean(p)
}

// sendFileDeniedBy is the deny rule on Read that covers the file a
// send_file call posts (as named and with its links resolved), if any.
func sendFileDeniedBy(rules []approvals.Rule, call approvals.Call) (approvals.Rule, bool) {
	p := sendFilePath(call)
	if call.Tool != mcptools.SendFileTool || p == "" {
		return approvals.Rule{}, false
	}
	for _, name := range []string{p, resolveExisting(p)} {
		in, _ := json.Marshal(map[string]string{"file_path": name})
		read := call
		read.Tool, read.Input, read.Resolved = "Read", in, ""
		if effect, r := approvals.EvaluateCall(rules, read); effect == approvals.EffectDeny {
			return *r, true
		}
	}
	return approvals.Rule{}, false
}

// sendFileRules are the rules that may settle a send_file call: all of
// them, but for a file that looks like a secret the built-in ones, so that
// only a rule someone made (or a person) lets it through. hidden (may be
// nil) is what the session cannot see.
func sendFileRules(rules []approvals.Rule, call approvals.Call, hidden func(string) bool) []approvals.Rule {
	if call.Tool != mcptools.SendFileTool {
		return rules
	}
	// Outside the working directory, or hidden from the session, send_file
	// refuses by itself: nobody is asked about what cannot be posted.
	p := sendFilePath(call)
	if p != "" && (!fspath.Within(p, call.Cwd) || hidden != nil && hidden(resolveExisting(p))) {
		return rules
	}
	if p != "" && !secretLike(p) && !secretLike(resolveExisting(p)) {
		return rules
	}
	out := make([]approvals.Rule, 0, len(rules))
	for _, r := range rules {
		if r.ID != 0 { // ID 0: built in
			out = append(out, r)
		}
	}
	return out
}

// secretNames are file names (glob patterns, matched case-insensitively
// against the base name) that usually hold credentials or keys.
var secretNames = []string{
	".env", ".env.*", "*.env", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.ppk", ".netrc", "_netrc", ".npmrc", ".pypirc",
	".git-credentials", ".htpasswd", "credentials", "credentials.*", "secret", "secrets", "secret.*", "secrets.*",
	"*.tfvars", "*.tfstate", "kubeconfig", ".dockercfg", "service-account*.json", ".pgpass", ".my.cnf",
}

// secretDirs are directories whose files usually are credentials.
var secretDirs = []string{".ssh", ".gnupg", ".aws", ".kube", ".docker", ".azure", ".config/gcloud", ".claude", ".git"}

// secretLike reports whether p names a file that looks like a secret.
func secretLike(p string) bool {
	base := strings.ToLower(filepath.Base(p))
	for _, pat := range secretNames {
		if ok, _ := path.Match(pat, base); ok {
			return true
		}
	}
	lower := strings.ToLower(filepath.ToSlash(p)) + "/"
	for _, d := range secretDirs {
		if strings.Contains(lower, "/"+d+"/") {
			return true
		}
	}
	return false
}
