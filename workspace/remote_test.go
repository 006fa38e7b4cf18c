package workspace

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A rival's push to the thread's branch is never overwritten: Push fails
// with git's message, before and after a fetch shows the rival's commit.
func TestPushRejected(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	ctx := testCtx(t)
	wt := create(t, m, rem.dir, "contested")
	commitFile(t, m, wt, "mine.txt", "1\n")
	if err := m.Push(ctx, wt, ""); err != nil {
		t.Fatal(err)
	}
	rival := rem.commit(wt.Branch, map[string]string{"theirs.txt": "x\n"}, "rival")
	commitFile(t, m, wt, "mine.txt", "2\n")
	err := m.Push(ctx, wt, "")
	if err == nil || !strings.Contains(err.Error(), "[rejected]") || !strings.Contains(err.Error(), "fetch first") {
		t.Fatalf("Push over a rival's commit = %v, want git's rejection", err)
	}
	if _, err := m.Check(ctx, rem.dir); err != nil { // a fetch: now git knows it is behind
		t.Fatal(err)
	}
	if err := m.Push(ctx, wt, ""); err == nil || !strings.Contains(err.Error(), "non-fast-forward") {
		t.Fatalf("Push after the fetch = %v, want a non-fast-forward rejection", err)
	}
	if got := rem.rev(wt.Branch); got != rival {
		t.Errorf("remote branch at %s, want the rival's %s", got, rival)
	}
	if n := unpushed(t, m, wt); n != 1 {
		t.Errorf("%d unpushed, want 1", n)
	}
}

// Push sends the worktree's branch only: not tags, not other branches,
// whatever the clone's config says (beneath the check that it is ours).
func TestPushOnlyTheBranch(t *testing.T) {
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	m, _ := newManager(t)
	wt := create(t, m, rem.dir, "only")
	c := commitFile(t, m, wt, "b.txt", "b\n")
	clone := filepath.Join(m.reposDir(), filepath.Base(filepath.Dir(wt.Path)))
	gitOK(t, "--git-dir="+clone, "tag", "v1", c)
	gitOK(t, "--git-dir="+clone, "update-ref", "refs/heads/claudeops/other", c)
	beneathCheck(t, m, clone, []string{"push.followTags", "true"}, []string{"remote.origin.push", "+refs/*:refs/*"})
	if err := m.Push(testCtx(t), wt, ""); err != nil {
		t.Fatal(err)
	}
	want := "refs/heads/" + wt.Branch + "\nrefs/heads/main\n"
	if got := rem.git("for-each-ref", "--format=%(refname)"); got != want {
		t.Errorf("remote refs:\n%s\nwant:\n%s", got, want)
	}
}

// gitWrapper is a git binary that records each call's arguments and
// environment before running the real git: the record is the oracle for
// what the manager hands git.
func gitWrapper(t *testing.T) (bin, argv, env string) {
	t.Helper()
	dir := t.TempDir()
	bin, argv, env = filepath.Join(dir, "git"), filepath.Join(dir, "argv"), filepath.Join(dir, "env")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\nenv >> '%s'\necho '--' >> '%s'\nexec '%s' \"$@\"\n", argv, env, env, realGit)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argv, env
}

// A credential in a clone URL is never in an error, a log line or a
// command line, whatever the failure.
func TestCredentialsRedacted(t *testing.T) {
	const secret = "s3cr3t-T0KEN-42"
	bare := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	gitOK(t, "--git-dir="+bare.dir, "config", "http.receivepack", "true")
	backend := &cgi.Handler{Path: realGit, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + filepath.Dir(bare.dir), "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=bot",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"),
	}}
	authed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pass, _ := r.BasicAuth(); pass != secret {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	defer authed.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom "+r.URL.String(), http.StatusInternalServerError)
	}))
	defer broken.Close()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()

	bin, argv, _ := gitWrapper(t)
	m, logs := newManager(t, func(o *Options) { o.Git = bin })
	ctx := testCtx(t)
	host := strings.TrimPrefix(authed.URL, "http://")
	good := "http://bot:" + secret + "@" + host + "/remote.git"
	var errs []error
	for _, repo := range []string{
		"http://bot:wrong-" + secret + "@" + host + "/remote.git",
		"http://" + secret + "@" + host + "/remote.git",
		"http://bot:" + secret + "@" + strings.TrimPrefix(broken.URL, "http://") + "/remote.git",
		"http://bot:" + secret + "@" + closedAddr + "/remote.git",
		"https://bot:" + secret + "@" + host + "/remote.git",
	} {
		_, err := m.Check(ctx, repo)
		if err == nil {
			t.Fatalf("Check(%s) succeeded", Redact(repo))
		}
		errs = append(errs, err)
	}
	// Through a working remote, then a push the remote rejects.
	wt := create(t, m, good, "creds")
	commitFile(t, m, wt, "b.txt", "b\n")
	if err := m.Push(ctx, wt, ""); err != nil {
		t.Fatal(err)
	}
	bare.commit(wt.Branch, map[string]string{"rival.txt": "r\n"}, "rival")
	commitFile(t, m, wt, "b.txt", "bb\n")
	pushErr := m.Push(ctx, wt, "")
	if pushErr == nil || !strings.Contains(pushErr.Error(), "[rejected]") {
		t.Fatalf("Push = %v, want a rejection", pushErr)
	}
	errs = append(errs, pushErr)
	for _, err := range errs {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the credential: %v", err)
		}
		t.Logf("error: %v", err)
	}
	// git hands the configured URL to git-remote-http on its command line.
	clone := filepath.Join(m.reposDir(), filepath.Base(filepath.Dir(wt.Path)))
	if cfg, err := os.ReadFile(filepath.Join(clone, "config")); err != nil || strings.Contains(string(cfg), secret) || !strings.Contains(string(cfg), host) {
		t.Errorf("the clone's config (%v) holds the credential, or no URL:\n%s", err, cfg)
	}
	argvLog, _ := os.ReadFile(argv)
	if !strings.Contains(string(argvLog), "ls-remote") {
		t.Fatalf("the wrapper saw no ls-remote:\n%s", argvLog)
	}
	for name, text := range map[string]string{"the log": logs.String(), "command lines": string(argvLog), "Redact": Redact(good)} {
		if strings.Contains(text, secret) {
			t.Errorf("%s show the credential:\n%s", name, text)
		}
	}
}

// git sees an environment built from an allowlist, and every call is told
// its repository and disarmed on the command line.
func TestGitEnvironmentAndArguments(t *testing.T) {
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-must-not-leak")
	t.Setenv("GIT_DIR", "/nonexistent")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch /tmp/x'")
	t.Setenv("SSH_AUTH_SOCK", "/run/agent.sock")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	t.Setenv("NO_PROXY", "127.0.0.1")
	bin, argv, envLog := gitWrapper(t)
	m, _ := newManager(t, func(o *Options) { o.Git = bin })
	rem := newRemote(t, "main", map[string]string{"a.txt": "a\n"})
	wt := create(t, m, rem.dir, "env")
	writeFile(t, wt.Path, "b.txt", "b\n")
	if _, _, err := m.Diff(testCtx(t), wt); err != nil {
		t.Fatal(err)
	}
	commitFile(t, m, wt, "c.txt", "c\n")
	if _, err := m.Remove(testCtx(t), wt); err != nil {
		t.Fatal(err)
	}
	envs, _ := os.ReadFile(envLog)
	for _, call := range strings.Split(strings.TrimSuffix(string(envs), "--\n"), "--\n") {
		for _, want := range []string{
			"GIT_CONFIG_NOSYSTEM=1\n", "GIT_CONFIG_GLOBAL=/dev/null\n", "GIT_TERMINAL_PROMPT=0\n",
			"HOME=" + m.homeDir() + "\n", "SSH_AUTH_SOCK=/run/agent.sock\n", "HTTPS_PROXY=http://proxy.invalid:3128\n",
		} {
			if !strings.Contains(call, want) {
				t.Errorf("a call's environment lacks %q:\n%s", want, call)
			}
		}
		for _, bad := range []string{"SLACK_BOT_TOKEN", "GIT_DIR=", "GIT_CONFIG_PARAMETERS", "xoxb"} {
			if strings.Contains(call, bad) {
				t.Errorf("a call's environment has %s:\n%s", bad, call)
			}
		}
	}
	calls, _ := os.ReadFile(argv)
	for _, call := range strings.Split(strings.TrimSpace(string(calls)), "\n") {
		if !strings.HasPrefix(call, "-c core.hooksPath=/dev/null -c core.fsmonitor=false ") ||
			!strings.Contains(call, " --git-dir="+m.Dir()+"/") {
			t.Errorf("call not disarmed or not told its repository: %s", call)
		}
		if strings.Contains(call, "--git-dir="+wt.Path) || strings.Contains(call, " add -A") {
			t.Errorf("call uses the worktree's git directory or git add: %s", call)
		}
	}
}

// silentRemote is a git:// remote that accepts connections and never
// answers; it hands over each connection it accepts.
func silentRemote(t *testing.T) (repo string, conns <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			ch <- c
		}
	}()
	return "git://" + ln.Addr().String() + "/silent.git", ch
}

// A remote that never answers: the timeout ends the fetch, and a cancelled
// ctx ends it too, killing git (the remote sees the connection close).
func TestNetworkTimeoutAndCancel(t *testing.T) {
	repo, conns := silentRemote(t)
	m, _ := newManager(t, func(o *Options) { o.NetTimeout = 500 * time.Millisecond })
	if _, err := m.Check(testCtx(t), repo); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Check of a silent remote = %v, want the deadline", err)
	}
	select {
	case c := <-conns: // git got as far as connecting (a loaded machine may not)
		expectClosed(t, c)
	default:
	}

	repo, conns = silentRemote(t)
	m2, _ := newManager(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() { _, err := m2.Check(ctx, repo); done <- err }()
	c := <-conns // git is connected and waiting
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Check cancelled = %v, want context.Canceled", err)
	}
	expectClosed(t, c)

	// Over http the connection is git-remote-http's, a child of git:
	// cancelling must end it too, not git alone.
	arrived, gone, stop := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
			gone <- struct{}{}
		case <-stop: // the test is over; let Close return
		}
	}))
	defer srv.Close()
	defer close(stop)
	ctx, cancel = context.WithCancel(testCtx(t))
	go func() { _, err := m2.Check(ctx, srv.URL+"/silent.git"); done <- err }()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Check over http cancelled = %v, want context.Canceled", err)
	}
	select {
	case <-gone:
	case <-time.After(time.Minute):
		t.Error("git-remote-http still holds its request a minute after the cancel")
	}
}

func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Error("git still holds the connection a minute after it was stopped")
			}
			return
		}
	}
}

// What git says is redacted even where git itself repeats a credential
// (e.g. git:// prints "user:pass@host" without a scheme).
func TestGitMessageRedacted(t *testing.T) {
	const secret = "p4ss-w0rd-99"
	m, _ := newManager(t)
	for _, repo := range []string{"git://bot:" + secret + "@example.org/x.git", "https://" + secret + "@example.org/x.git"} {
		if _, err := m.repoRef(repo); err != nil {
			t.Fatal(err)
		}
	}
	for _, said := range []string{
		"fatal: unable to look up bot:" + secret + "@example.org (port 9418)",
		"fatal: could not read Password for 'https://" + secret + "@example.org': terminal prompts disabled",
		"error: failed to push some refs to 'ssh://other:" + secret + "x@example.org/y'",
		"hint: " + secret,
	} {
		got := m.gitMessage(said)
		if strings.Contains(got, secret) {
			t.Errorf("gitMessage(%q) = %q", said, got)
		}
	}
}
