package proc

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

// Stat is what the bot reads of /proc/<pid>/stat.
type Stat struct {
	State     byte // R, S, D, Z, T, …
	PPID      int
	PGID, SID int
	// Start is when the process was made, in clock ticks since boot
	// (field 22): set at fork, kept across exec. A pid and a start time
	// name one process of a boot.
	Start   uint64
	Command string
}

// ErrNoProcess: there is no process with that pid (now).
var ErrNoProcess = errors.New("no such process")

// ReadStat reads /proc/<pid>/stat. The command name is in parentheses and
// may hold anything, spaces and ')' included: the fields start after the
// last ')'.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return Stat{}, ErrNoProcess
	}
	if err != nil {
		return Stat{}, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// Field 3 (state) is the first after the name; field 22 (starttime)
	// the 20th.
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	st := Stat{State: f[0][0], Command: string(b[open+1 : end])}
	var errs [4]error
	st.PPID, errs[0] = strconv.Atoi(f[1])
	st.PGID, errs[1] = strconv.Atoi(f[2])
	st.SID, errs[2] = strconv.Atoi(f[3])
	st.Start, errs[3] = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}
