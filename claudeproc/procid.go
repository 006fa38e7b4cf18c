package claudeproc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
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

// procStat is what the tests and the leftover check read of
// /proc/<pid>/stat.
type procStat struct {
	state       byte // R, S, D, Z, T, …
	ppid, pgid  int
	sid         int
	start       uint64
	commandName string
}

// errNoProcess: there is no process with that pid (now).
var errNoProcess = errors.New("no such process")

// readStat reads /proc/<pid>/stat. The command name is in parentheses and
// may hold anything, spaces and ')' included: the fields start after the
// last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return procStat{}, errNoProcess
	}
	if err != nil {
		return procStat{}, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// Field 3 (state) is the first after the name; field 22 (starttime)
	// the 20th.
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	st := procStat{state: f[0][0], commandName: string(b[open+1 : end])}
	var errs [4]error
	st.ppid, errs[0] = strconv.Atoi(f[1])
	st.pgid, errs[1] = strconv.Atoi(f[2])
	st.sid, errs[2] = strconv.Atoi(f[3])
	st.start, errs[3] = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

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
	return ProcessID{PID: pid, Start: st.start, Boot: boot}, nil
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
	return err == nil && st.start == id.Start
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
		if err != nil || st.pgid != pgid || st.state == 'Z' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids, nil
}
