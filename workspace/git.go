package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/claudeops/claudeops/internal/proc"
)

// operatorEnv are the variables of the bot's environment git may see: how
// to reach remotes (the operator's ssh agent and command, proxies, CAs)
// and the time zone of commit dates. Nothing else is inherited — above
// all no GIT_* variable that would point git at another repository or
// add configuration (GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT…).
var operatorEnv = []string{
	"PATH", "TZ", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_SSH_VARIANT",
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
	"NO_PROXY", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
}

// gitEnv is the environment of every git process.
func gitEnv(environ []string, home string) []string {
	env := []string{
		"HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_LITERAL_PATHSPECS=1",
		"LC_ALL=C",
	}
	hasPath := false
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(operatorEnv, name) {
			env = append(env, kv)
			hasPath = hasPath || name == "PATH"
		}
	}
	if !hasPath {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	return env
}

// baseArgs start every git call. Command-line configuration outranks every
// file, and git hands it on to the git processes it starts (GIT_CONFIG_PARAMETERS),
// including those it runs in nested repositories: no hook, fsmonitor, pager,
// external diff, credential helper or transport outside file/http(s)/ssh/git.
func baseArgs(env []string) []string {
	args := []string{
		"-c", "core.hooksPath=/dev/null",
		"-c", "core.fsmonitor=false",
		"-c", "core.pager=cat",
		"-c", "core.untrackedCache=false",
		"-c", "credential.helper=",
		"-c", "core.askPass=", // GIT_TERMINAL_PROMPT=0 does not keep git from running it
		"-c", "protocol.allow=never",
		"-c", "protocol.ext.allow=never", // a specific key would outrank protocol.allow
		"-c", "protocol.fd.allow=never",
		"-c", "protocol.file.allow=always",
		"-c", "protocol.git.allow=always",
		"-c", "protocol.ssh.allow=always",
		"-c", "protocol.http.allow=always",
		"-c", "protocol.https.allow=always",
		"-c", "submodule.recurse=false",
		"-c", "fetch.recurseSubmodules=false",
		"-c", "push.recurseSubmodules=no",
		"-c", "commit.gpgSign=false",
		"-c", "gc.autoDetach=false", // a detached gc would outlive its caller
		"-c", "maintenance.autoDetach=false",
		"-c", "advice.detachedHead=false",
		"--no-replace-objects",
	}
	// ssh must fail rather than ask; the operator's own ssh command wins
	// (GIT_SSH_COMMAND outranks core.sshCommand, which outranks GIT_SSH).
	if !slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "GIT_SSH_COMMAND=") || strings.HasPrefix(kv, "GIT_SSH=")
	}) {
		args = append(args, "-c", "core.sshCommand=ssh -o BatchMode=yes")
	}
	return args
}

// gitCall is one git invocation.
type gitCall struct {
	// repo is the clone git works in (--git-dir), never found from a
	// worktree; its config is checked before and after the call.
	repo     *repoRef
	dir      string   // the git directory when not repo's clone (one being made)
	unsealed bool     // dir has no config of ours yet: git init only
	workTree string   // --work-tree, or none
	args     []string // the subcommand and its arguments
	env      []string // added to the environment (GIT_INDEX_FILE, identities)
	stdin    []byte
	slow     bool  // talks to the remote or checks out a tree: the long timeout
	maxOut   int64 // stdout cap; 16 MiB when zero
}

// Error is a git command that failed, with what git said (credentials
// redacted, hints dropped).
type Error struct {
	Cmd    string // the subcommand, e.g. "push"
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("git %s: %v", e.Cmd, e.Err)
	}
	return fmt.Sprintf("git %s: %v: %s", e.Cmd, e.Err, e.Stderr)
}

func (e *Error) Unwrap() error { return e.Err }

// errOutputCap is stdout past gitCall.maxOut.
var errOutputCap = errors.New("output over the cap")

// run runs git and returns its stdout. The process gets a session of its
// own (no terminal to prompt on), and ctx's end or the timeout kills it
// with everything it started (ssh, remote helpers); so does the bot's
// death (Manager.runSupervised).
func (m *Manager) run(ctx context.Context, c gitCall) ([]byte, error) {
	timeout := m.timeout
	if c.slow {
		timeout = m.netTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	gitDir := c.dir
	if gitDir == "" {
		gitDir = c.repo.clone
	}
	check := func(when string) error {
		if c.unsealed {
			return nil
		}
		found, err := m.checkConfig(gitDir, c.repo.config)
		if err == nil && len(found) > 0 {
			err = m.tampered(gitDir, c.args[0], found, when)
		}
		return err
	}
	if err := check("nothing was run; try again"); err != nil {
		return nil, err
	}
	if c.slow && gitDir == c.repo.clone { // not a clone being made: see dropDeadRefLocks
		release, err := m.holdClone(c.repo)
		if err != nil {
			return nil, &Error{Cmd: c.args[0], Err: fmt.Errorf("hold the clone: %w", err)}
		}
		defer release()
	}
	args := append(slices.Clone(m.base), "--git-dir="+gitDir)
	if c.workTree != "" {
		args = append(args, "--work-tree="+c.workTree)
	}
	args = append(args, c.args...)
	cmd := exec.CommandContext(ctx, m.git, args...)
	cmd.Env = append(slices.Clone(m.env), c.env...)
	cmd.Dir = m.dir // never a worktree: nothing is discovered from the cwd
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	maxOut := c.maxOut
	if maxOut <= 0 {
		maxOut = 16 << 20
	}
	stdout := &capped{max: maxOut}
	stderr := &capped{max: 64 << 10, truncate: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := m.runSupervised(cmd, c.slow)
	m.log.Debug("git", "cmd", c.args[0], "took", time.Since(start), "err", err)
	// Changed while git ran: git may have read it, so its result is not used.
	if err := check("it changed while git ran, so what git did is in doubt"); err != nil {
		return nil, err
	}
	if stdout.over {
		return nil, &Error{Cmd: c.args[0], Err: errOutputCap}
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return stdout.buf.Bytes(), &Error{Cmd: c.args[0], Stderr: m.gitMessage(stderr.buf.String()), Err: err}
	}
	return stdout.buf.Bytes(), nil
}

// gitMessage is git's stderr made fit for an error: hints and blank lines
// dropped, credentials redacted, at most 2000 bytes.
func (m *Manager) gitMessage(s string) string {
	var keep []string
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "hint:") {
			continue
		}
		keep = append(keep, line)
	}
	s = m.redact(strings.Join(keep, "\n"))
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}

// capped keeps at most max bytes. Past it, it either drops the rest
// (truncate) or fails the write, which ends git with a broken pipe.
type capped struct {
	buf      bytes.Buffer
	max      int64
	truncate bool
	over     bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - int64(c.buf.Len())
	if int64(len(p)) <= room {
		return c.buf.Write(p)
	}
	if !c.truncate {
		c.over = true
		return 0, errOutputCap
	}
	c.buf.Write(p[:max(room, 0)])
	return len(p), nil
}

// userinfo is the credentials part of a URL ("scheme://user:pass@").
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s'"]*@`)

// redact removes URL credentials from s: any URL's userinfo, and every
// credential seen in a clone URL wherever else it appears.
func (m *Manager) redact(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}***@")
	m.mu.Lock()
	defer m.mu.Unlock()
	for secret := range m.secrets {
		s = strings.ReplaceAll(s, secret, "***")
	}
	return s
}

// runSupervised runs cmd so that it dies with the bot, however the bot
// dies (internal/proc). A call that talks to the remote or checks out a
// tree (slow) starts processes of its own (ssh, a remote helper,
// upload-pack, index-pack, checkout's): it is run as the CLI is, a keeper
// stopping and killing the whole tree, so a fetch does not go on filling
// a clone nobody will use, nor a push land after the restarted bot has
// looked at the remote. The other calls are plumbing that starts no
// process (TestQuickGitStartsNothing): the kernel kills git with the bot,
// and no keeper is paid for (docs/PERFORMANCE.md).
func (m *Manager) runSupervised(cmd *exec.Cmd, slow bool) error {
	if m.unsupervised {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd.Run()
	}
	if !slow {
		if err := proc.StartLeaf(cmd); err != nil {
			return err
		}
		return cmd.Wait()
	}
	k, err := proc.Start(cmd)
	if err != nil {
		return err
	}
	err = cmd.Wait()
	k.Kill()
	if kerr := k.Wait(); kerr != nil && err == nil {
		err = fmt.Errorf("reap git's keeper: %w", kerr)
	}
	return err
}
