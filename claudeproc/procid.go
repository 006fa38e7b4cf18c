package claudeproc

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/claudeops/claudeops/internal/proc"
)

// ProcessID names one process across pid reuse. The kernel hands a freed
// pid to the next process that needs one (pids wrap at
// /proc/sys/kernel/pid_max, often only 32768), but two processes of one
// boot never share a pid and a start time.
type ProcessID struct {
	PID int
	// Start is when the process was made, in clock ticks since boot
	// (/proc/<pid>/stat field 22): set at fork, kept across exec.
	Start uint64
	// Boot is the kernel's boot id (/proc/sys/kernel/random/boot_id): a
	// start time means something only within one boot.
	Boot string
}

// readStat reads /proc/<pid>/stat (proc.ReadStat).
func readStat(pid int) (proc.Stat, error) { return proc.ReadStat(pid) }

// bootID is this boot's id.
func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("read the boot id: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", errors.New("read the boot id: empty")
	}
	return id, nil
}

// Identify reads the identity of the running process pid.
func Identify(pid int) (ProcessID, error) {
	boot, err := bootID()
	if err != nil {
		return ProcessID{}, err
	}
	st, err := readStat(pid)
	if err != nil {
		return ProcessID{}, fmt.Errorf("identify pid %d: %w", pid, err)
	}
	return ProcessID{PID: pid, Start: st.Start, Boot: boot}, nil
}

// Current reports whether the process id names exists now: same boot,
// same pid, same start time. A zombie counts: until it is reaped it holds
// its pid, and so its process group's id.
func (id ProcessID) Current() bool {
	if id.PID <= 0 || id.Boot == "" {
		return false
	}
	boot, err := bootID()
	if err != nil || boot != id.Boot {
		return false
	}
	st, err := readStat(id.PID)
	return err == nil && st.Start == id.Start
}

// groupMembers lists the live (not zombie) processes in process group
// pgid, by scanning /proc. Processes that vanish meanwhile are skipped.
func groupMembers(pgid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.PGID != pgid || st.State == 'Z' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids, nil
}
