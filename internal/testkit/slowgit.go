package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// slowSSH is a GIT_SSH ($1 the host, $2 the remote command) that runs the
// command locally, and before or after it does what the file named for
// the service (upload or receive) in its control directory says:
// "before N" or "after N" sleeps N seconds, "fail" answers nothing. It
// marks that it started (started-<service>).
const slowSSH = `#!/bin/sh
ctl=$CTL
case $2 in git-upload-pack*) what=upload ;; *) what=receive ;; esac
set -- "$1" "$2" $(cat "$ctl/$what" 2>/dev/null)
: > "$ctl/started-$what"
case $3 in before) sleep "$4" ;; fail) echo "ssh: connect to host $1: Connection refused" >&2; exit 255 ;; esac
/bin/sh -c "$2"
rc=$?
case $3 in after) sleep "$4" ;; esac
exit $rc
`

// SlowRemote is a bare repository on disk reached as ssh://fakehost<dir>
// through a slow transport the test steers: a remote that takes its time,
// or does not answer, without a network.
type SlowRemote struct {
	Dir, URL string
	ctl, ssh string
}

// NewSlowRemote puts the slow transport in front of the bare repository dir.
func NewSlowRemote(t testing.TB, dir string) *SlowRemote {
	t.Helper()
	r := &SlowRemote{Dir: dir, URL: "ssh://fakehost" + dir, ctl: t.TempDir()}
	r.ssh = filepath.Join(t.TempDir(), "slow-ssh")
	script := strings.Replace(slowSSH, "$CTL", "'"+r.ctl+"'", 1)
	if err := os.WriteFile(r.ssh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

// Set tells the transport what to do for a service, "upload" (fetch,
// ls-remote) or "receive" (push): "before N", "after N", "fail", or ""
// for nothing.
func (r *SlowRemote) Set(t testing.TB, service, mode string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.ctl, service), []byte(mode), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(r.ctl, "started-"+service))
}

// Started says whether the service was reached since it was last Set.
func (r *SlowRemote) Started(service string) bool {
	_, err := os.Stat(filepath.Join(r.ctl, "started-"+service))
	return err == nil
}

// Env is what a bot's environment needs for git to go through the slow
// transport: the operator's GIT_SSH, which the bot hands its git.
func (r *SlowRemote) Env() []string {
	return []string{"GIT_SSH=" + r.ssh, "GIT_SSH_VARIANT=simple"}
}
