package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// schemes are the URL schemes a repository may use; git's other
// transports ("ext::", "fd::", remote helpers) are refused here and again
// by protocol.allow=never.
var schemes = map[string]bool{
	"file": true, "http": true, "https": true, "ssh": true, "git": true,
	"git+ssh": true, "ssh+git": true,
}

// ValidateRepo says whether repo may be bound: an absolute local path, a
// file/http(s)/ssh/git URL, or scp-like "[user@]host:path". Refused: an
// empty or relative path, a leading "-" (an option to git), a "::"
// (a transport helper: "ext::sh -c …"), control characters, other schemes,
// a host starting with "-". It does no I/O.
func ValidateRepo(repo string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %s: %s", ErrBadRepo, Redact(repo), why) }
	switch {
	case repo == "":
		return bad("empty")
	case len(repo) > 2048:
		return bad("too long")
	case !utf8.ValidString(repo):
		return bad("not UTF-8")
	case strings.ContainsFunc(repo, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return bad("control character")
	case strings.HasPrefix(repo, "-"):
		return bad("starts with -")
	case strings.Contains(repo, "::"):
		return bad("transport helpers are not allowed")
	}
	if scheme, _, ok := strings.Cut(repo, "://"); ok {
		u, err := url.Parse(repo)
		if err != nil {
			return bad("not a URL")
		}
		scheme = strings.ToLower(scheme)
		switch {
		case !schemes[scheme]:
			return bad("scheme " + scheme + " not allowed")
		case scheme == "file" && !strings.HasPrefix(u.Path, "/"):
			return bad("file URL without an absolute path")
		case scheme != "file" && u.Host == "":
			return bad("no host")
		case strings.HasPrefix(u.Host, "-") || strings.HasPrefix(u.Path, "/-"):
			return bad("host or path starts with -")
		}
		return nil
	}
	if strings.HasPrefix(repo, "/") {
		return nil
	}
	// scp-like: a colon before any slash, as git reads it.
	host, p, ok := strings.Cut(repo, ":")
	if !ok || strings.Contains(host, "/") {
		return bad("a local path must be absolute")
	}
	if _, h, hasUser := strings.Cut(host, "@"); hasUser {
		host = h
	}
	if host == "" || p == "" || strings.HasPrefix(host, "-") || strings.HasPrefix(p, "-") {
		return bad("not a valid host:path")
	}
	return nil
}

// Redact is repo with the credentials of a URL replaced by "***", for
// logs and messages. Other forms are returned as they are.
func Redact(repo string) string {
	return userinfo.ReplaceAllString(repo, "${1}***@")
}

// repoRef is where one repository lives under Dir.
type repoRef struct {
	repo   string
	key    string // "<last path element>-<hash>": the clone's and its trees' directory name
	clone  string // the bare clone
	trees  string // its worktrees' parent directory
	url    string // the remote's URL as the clone's config holds it: no http(s) credential
	auth   []string
	config []byte // the clone's whole config file (configFor)
}

// repoRef validates repo and names its directories; it does no I/O
// beyond remembering its credentials for redaction.
func (m *Manager) repoRef(repo string) (*repoRef, error) {
	if err := ValidateRepo(repo); err != nil {
		return nil, err
	}
	m.rememberSecret(repo)
	sum := sha256.Sum256([]byte(repo))
	key := repoName(repo) + "-" + hex.EncodeToString(sum[:6])
	r := &repoRef{
		repo: repo, key: key, url: repo,
		clone: filepath.Join(m.reposDir(), key),
		trees: filepath.Join(m.treesDir(), key),
	}
	if basic := r.splitCredential(); basic != "" {
		m.mu.Lock()
		m.secrets[basic] = struct{}{}
		m.mu.Unlock()
	}
	r.config = configFor(r.url)
	return r, nil
}

// splitCredential takes an http(s) URL's credential out of the URL git is
// given and sends it instead as a header from the environment of the calls
// that reach the remote: git hands a remote's URL to its helper process
// (git-remote-https) on the command line, which every user may read, while
// a process's environment is its owner's. It returns the header's
// credential, "" when there is none.
func (r *repoRef) splitCredential() (basic string) {
	u, err := url.Parse(r.repo)
	if err != nil || u.User == nil || !strings.Contains(r.repo, "://") || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	pass, _ := u.User.Password()
	basic = base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pass))
	u.User = nil
	r.url = u.String()
	r.auth = []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http." + r.url + ".extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic,
	}
	return basic
}

// rememberSecret keeps a URL's password (or token-as-user), both as
// written and decoded, so that it is redacted wherever git repeats it.
func (m *Manager) rememberSecret(repo string) {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil || !strings.Contains(repo, "://") {
		return
	}
	secret, ok := u.User.Password()
	if !ok {
		secret = u.User.Username() // a token given as the user name
	}
	raw, _, _ := strings.Cut(strings.SplitN(repo, "://", 2)[1], "@")
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range []string{secret, raw} {
		if len(s) >= 6 { // shorter ones would garble messages and hide little
			m.secrets[s] = struct{}{}
		}
	}
}

// repoName is the repository's last path element, made a safe name.
func repoName(repo string) string {
	p := repo
	if u, err := url.Parse(repo); err == nil && strings.Contains(repo, "://") {
		p = u.Path
	} else if _, after, ok := strings.Cut(repo, ":"); ok && !strings.HasPrefix(repo, "/") {
		p = after
	}
	p = strings.TrimSuffix(path.Base(strings.TrimRight(p, "/")), ".git")
	if n := sanitize(p, 32); n != "" {
		return n
	}
	return "repo"
}

// sync makes sure the clone exists and is fetched, and returns the
// remote's default branch. The caller holds the clone's lock.
func (m *Manager) sync(ctx context.Context, r *repoRef) (string, error) {
	created, err := m.ensureClone(ctx, r)
	if err != nil {
		return "", err
	}
	if !created {
		m.dropDeadRefLocks(r)
		if err := m.fetch(ctx, r, r.clone); err != nil {
			return "", fmt.Errorf("fetch %s: %w", Redact(r.repo), err)
		}
	}
	return m.defaultBranch(ctx, r)
}

// ensureClone creates the clone on first use: git init --bare, its config
// written whole by us (the remote's URL is never on a command line of
// ours) and locked, a first fetch, all in a temporary directory renamed
// into place only when complete, so a bad URL leaves nothing.
func (m *Manager) ensureClone(ctx context.Context, r *repoRef) (created bool, err error) {
	if _, err := os.Stat(filepath.Join(r.clone, "config")); err == nil {
		return false, nil
	}
	tmp, release, err := m.makeTemp("clone-")
	if err != nil {
		return false, fmt.Errorf("create clone of %s: %w", Redact(r.repo), err)
	}
	defer release()
	if _, err := m.run(ctx, gitCall{dir: tmp, unsealed: true, args: []string{
		"init", "--bare", "--quiet", "--template=", "--initial-branch=claudeops-none",
	}}); err != nil {
		return false, fmt.Errorf("init clone of %s: %w", Redact(r.repo), err)
	}
	if err := sealConfig(tmp, r.config); err != nil {
		return false, fmt.Errorf("init clone of %s: %w", Redact(r.repo), err)
	}
	if err := m.fetch(ctx, r, tmp); err != nil {
		return false, fmt.Errorf("clone %s: %w", Redact(r.repo), err)
	}
	if err := os.Rename(tmp, r.clone); err != nil {
		return false, fmt.Errorf("clone %s: %w", Redact(r.repo), err)
	}
	m.log.Info("cloned", "repo", Redact(r.repo), "clone", r.clone)
	return true, nil
}

// fetch brings every branch of the remote into refs/remotes/origin/,
// nothing else: no tags, no submodules.
func (m *Manager) fetch(ctx context.Context, r *repoRef, clone string) error {
	_, err := m.run(ctx, gitCall{repo: r, dir: clone, slow: true, env: r.auth, args: []string{
		"fetch", "--quiet", "--prune", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head",
		"origin", "+refs/heads/*:refs/remotes/origin/*",
	}})
	return err
}

// defaultBranch asks the remote which branch its HEAD names; failing
// that, the one remembered from before, then main, then master.
func (m *Manager) defaultBranch(ctx context.Context, r *repoRef) (string, error) {
	out, err := m.run(ctx, gitCall{repo: r, slow: true, env: r.auth, args: []string{"ls-remote", "--symref", "origin", "HEAD"}})
	if err != nil {
		return "", fmt.Errorf("ask %s for its default branch: %w", Redact(r.repo), err)
	}
	var candidates []string
	for line := range strings.Lines(string(out)) {
		if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			if name, _, ok := strings.Cut(ref, "\tHEAD"); ok {
				candidates = append(candidates, name)
			}
		}
	}
	if out, err := m.run(ctx, gitCall{repo: r, args: []string{"symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"}}); err == nil {
		candidates = append(candidates, strings.TrimPrefix(strings.TrimSpace(string(out)), "refs/remotes/origin/"))
	}
	candidates = append(candidates, "main", "master")
	for _, name := range candidates {
		ref := "refs/remotes/origin/" + name
		if !validRef(ref) {
			continue
		}
		if ok, err := m.refExists(ctx, r, ref); err != nil {
			return "", fmt.Errorf("default branch of %s: %w", Redact(r.repo), err)
		} else if !ok {
			continue
		}
		if _, err := m.run(ctx, gitCall{repo: r, args: []string{"symbolic-ref", "refs/remotes/origin/HEAD", ref}}); err != nil {
			return "", fmt.Errorf("remember the default branch of %s: %w", Redact(r.repo), err)
		}
		return name, nil
	}
	return "", fmt.Errorf("%s: no default branch (the remote names none and has neither main nor master)", Redact(r.repo))
}

// refExists says whether the fully qualified ref exists in the clone; an
// error is git failing otherwise than by not finding it.
func (m *Manager) refExists(ctx context.Context, r *repoRef, ref string) (bool, error) {
	_, err := m.run(ctx, gitCall{repo: r, args: []string{"show-ref", "--verify", "--quiet", ref}})
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return false, nil
	}
	return err == nil, err
}

// revParse resolves rev (a full ref or id, never an option) to an object id.
func (m *Manager) revParse(ctx context.Context, r *repoRef, rev string) (string, error) {
	out, err := m.run(ctx, gitCall{repo: r, args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", rev}})
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}
