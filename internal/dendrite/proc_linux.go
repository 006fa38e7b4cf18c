package dendrite

import "syscall"

// sysProcAttr makes the kernel kill Dendrite when the test binary dies
// without running its cleanups (go test -timeout, a crash), so no server
// outlives the test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
