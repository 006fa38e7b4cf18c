package claudeproc

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// A session is more than the CLI's process group: the real CLI starts each
// Bash command in a session of its own (setsid), which no group signal
// reaches. What ties them to the session is parenthood, so the tree of
// processes under the CLI is what signals go to. Looking at a running tree
// races with it (a process forks, or reaps a child whose pid is then
// reused), so it is frozen first: a stopped process neither forks nor
// reaps, and the pids found stay the processes found.

// freezeWait bounds how long freezeTree waits for a stop to take effect
// (a process in uninterruptible sleep stops only when it leaves it).
const freezeWait = 2 * time.Second

// freezeTree stops root and every process under it, found by parent pid
// in /proc round after round, until a round finds no new process and every
// one found has stopped (or exited: a zombie holds its pid, its parent
// being stopped). It returns the tree, root first.
func freezeTree(root int) []ProcessID {
	_ = syscall.Kill(root, syscall.SIGSTOP)
	in := map[int]bool{root: true}
	pids := []int{root}
	deadline := time.Now().Add(freezeWait)
	for {
		added := false
		for pid, ppid := range parents() {
			if in[ppid] && !in[pid] {
				_ = syscall.Kill(pid, syscall.SIGSTOP)
				in[pid] = true
				pids = append(pids, pid)
				added = true
			}
		}
		// A stop not yet taken effect may let one more fork through.
		if !added && (allStopped(pids) || time.Now().After(deadline)) {
			break
		}
		if !added {
			time.Sleep(time.Millisecond)
		}
	}
	tree := make([]ProcessID, 0, len(pids))
	for _, pid := range pids {
		if id, err := Identify(pid); err == nil {
			tree = append(tree, id)
		}
	}
	return tree
}

// parents maps each process in /proc to its parent.
func parents() map[int]int {
	ents, _ := os.ReadDir("/proc")
	m := make(map[int]int, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil {
			m[pid] = st.PPID
		}
	}
	return m
}

// allStopped: each of pids is stopped, a zombie, or gone.
func allStopped(pids []int) bool {
	for _, pid := range pids {
		st, err := readStat(pid)
		if err == nil && st.State != 'T' && st.State != 't' && st.State != 'Z' && st.State != 'X' {
			return false
		}
	}
	return true
}

// signalTree sends sig to root's process group and to every process of
// tree (freezeTree's), then continues those it stopped, unless sig ends or
// stops them anyway. A pid whose process is no longer the one found is
// left alone.
func signalTree(root int, tree []ProcessID, sig syscall.Signal) error {
	err := syscall.Kill(-root, sig)
	if errors.Is(err, syscall.ESRCH) {
		err = nil
	}
	for _, id := range tree {
		if id.Current() {
			_ = syscall.Kill(id.PID, sig)
		}
	}
	if sig != syscall.SIGKILL && sig != syscall.SIGSTOP {
		for _, id := range tree {
			if id.Current() {
				_ = syscall.Kill(id.PID, syscall.SIGCONT)
			}
		}
	}
	return err
}

// signalSession sends sig to everything of the session under root: the
// CLI, its process group, and what it started in sessions of their own.
func signalSession(root int, sig syscall.Signal) error {
	return signalTree(root, freezeTree(root), sig)
}
