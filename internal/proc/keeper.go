package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// When the bot dies, a supervised child is stopped by its parent-death
// signal (SIGSTOP): frozen, it does nothing more, and what it started stays
// its children. Its keeper then ends them all. It is a shell, started with
// each child, that reads a pipe the bot alone can write to. The bot never
// writes; when it dies the kernel closes its end, the keeper reads
// end-of-file, checks that the child is still the process it was started
// for, stops every process under it (round after round, until none is new)
// and kills them, the child's process group first. It ignores SIGTERM,
// SIGINT, SIGHUP and SIGQUIT, and lives in a process group of its own, so
// that nothing sent to the child's group reaches it. While the bot lives
// it kills the keeper once the child is reaped.

// keeperScript is the keeper; $1 is the child's pid, $2 its start time
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

// KeeperShell runs the keeper.
const KeeperShell = "/bin/sh"

// KeeperName is the keeper's $0: what ps shows of it.
const KeeperName = "claudeops-keeper"

// Keeper is a started keeper: its process, and the bot's end of its pipe.
type Keeper struct {
	cmd *exec.Cmd
	w   *os.File
}

// StartKeeper starts the keeper of the child pid, whose start time (Stat.Start)
// is start. Called on the spawning thread, though the keeper has no
// parent-death signal: it must outlive the bot for the moment it takes to act.
func StartKeeper(pid int, start uint64) (*Keeper, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start a keeper: pipe: %w", err)
	}
	defer r.Close() // the keeper has its copy
	// It needs no environment.
	cmd := exec.Command(KeeperShell, "-c", keeperScript, KeeperName,
		strconv.Itoa(pid), strconv.FormatUint(start, 10))
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("start a keeper (%s): %w", KeeperShell, err)
	}
	return &Keeper{cmd: cmd, w: w}, nil
}

// PID is the keeper's process id.
func (k *Keeper) PID() int { return k.cmd.Process.Pid }

// Kill ends the keeper without letting it act: the child ended while the
// bot lived. It is the bot's child and not reaped, so its pid is its.
func (k *Keeper) Kill() { _ = k.cmd.Process.Signal(syscall.SIGKILL) }

// Wait reaps the keeper (after Kill) and closes the bot's end of its pipe.
func (k *Keeper) Wait() error {
	err := k.cmd.Wait()
	k.w.Close()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // killed, as it should be
	}
	return err
}
