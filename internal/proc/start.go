package proc

import (
	"fmt"
	"os/exec"
	"syscall"
)

// Start starts cmd as a supervised child: forked on the spawning thread, in
// a session of its own (no terminal; its own process group, which
// cmd.Cancel may kill whole), with the parent-death signal SIGSTOP, and
// with its keeper. It sets cmd.SysProcAttr. The caller reaps the child
// (cmd.Wait) and only then kills and reaps the keeper (Keeper.Kill,
// Keeper.Wait): until the child is reaped its pid is its own. When Start
// fails, nothing of cmd runs.
func Start(cmd *exec.Cmd) (*Keeper, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGSTOP}
	var k *Keeper
	var err error
	OnSpawnThread(func() {
		if err = cmd.Start(); err != nil {
			return
		}
		pid := cmd.Process.Pid
		var st Stat
		// Ours and not reaped: its stat is there even if it has exited.
		if st, err = ReadStat(pid); err == nil {
			k, err = StartKeeper(pid, st.Start)
		}
		if err != nil {
			// A child the bot could not hold is not left running.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = cmd.Wait()
			err = fmt.Errorf("supervise %s: %w", cmd.Path, err)
		}
	})
	return k, err
}

// StartLeaf starts cmd as a supervised child that starts no process of its
// own (git's plumbing): forked on the spawning thread, in a session of its
// own, with the parent-death signal SIGKILL. The kernel's kill at the
// bot's death is then the whole of its supervision, with nothing under it
// to orphan, and it costs no keeper. It sets cmd.SysProcAttr.
func StartLeaf(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	var err error
	OnSpawnThread(func() { err = cmd.Start() })
	return err
}
