package claudeproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// When the bot dies, its local CLI is stopped by its parent-death signal
// (runner.go): frozen, it does nothing more, and what it started stays its
// children. The keeper then ends them all. It is a shell, started with
// each local session, that reads a pipe the bot alone can write to. The
// bot never writes; when it dies the kernel closes its end, the keeper
// reads end-of-file, checks that the CLI is still the process it was
// started for, stops every process under it (round after round, until
// none is new) and kills them, the CLI's process group first. It ignores
// SIGTERM, SIGINT, SIGHUP and SIGQUIT, and lives in a process group of its
// own, so that nothing sent to the session reaches it. While the session
// runs normally the bot ends it with SIGKILL when the CLI has exited.
//
// What a tool detaches from the tree (a daemon that double-forks) escapes
// it, as it escapes the bot's own signals: the local runner confines
// nothing (the sandbox runner does, with a PID namespace).

// keeperScript is the keeper; $1 is the CLI's pid, $2 its start time
// (/proc/<pid>/stat field 22). Builtins only: it needs no PATH.
const keeperScript = `trap '' TERM INT HUP QUIT
read -r _
root=$1 start=$2
read -r s < "/proc/$root/stat" || exit 0
s=${s##*) }
set -- $s
[ "${20}" = "$start" ] || exit 0
kill -s STOP "$root"
tree=" $root " quiet=0
while [ "$quiet" -lt 2 ]; do
	quiet=$((quiet + 1))
	for f in /proc/[0-9]*/stat; do
		p=${f#/proc/} p=${p%/stat}
		case $tree in *" $p "*) continue ;; esac
		read -r s < "$f" || continue
		s=${s##*) }
		set -- $s
		case $tree in *" $2 "*) kill -s STOP "$p"; tree="$tree$p " quiet=0 ;; esac
	done
done
kill -s KILL -- "-$root"
kill -s KILL $tree`

// keeperShell runs keeperScript.
const keeperShell = "/bin/sh"

// keeper is a started keeper: its process, and the bot's end of its pipe.
type keeper struct {
	cmd *exec.Cmd
	w   *os.File
}

// startKeeper starts the keeper of the CLI cli. Called on the spawning
// thread, though the keeper has no parent-death signal: it must outlive
// the bot for the moment it takes to act.
func startKeeper(cli ProcessID) (*keeper, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start the session's keeper: pipe: %w", err)
	}
	defer r.Close() // the keeper has its copy
	// $0 names it in ps; it needs no environment.
	cmd := exec.Command(keeperShell, "-c", keeperScript, "claudeops-keeper",
		strconv.Itoa(cli.PID), strconv.FormatUint(cli.Start, 10))
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("start the session's keeper (%s): %w", keeperShell, err)
	}
	return &keeper{cmd: cmd, w: w}, nil
}

// pid is the keeper's process id.
func (k *keeper) pid() int { return k.cmd.Process.Pid }

// kill ends the keeper without letting it act: the session ended while
// the bot lived. It is the bot's child and not reaped, so its pid is its.
func (k *keeper) kill() { _ = k.cmd.Process.Signal(syscall.SIGKILL) }

// wait reaps the keeper (after kill) and closes the bot's end of its pipe.
func (k *keeper) wait() error {
	err := k.cmd.Wait()
	k.w.Close()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // killed, as it should be
	}
	return err
}
