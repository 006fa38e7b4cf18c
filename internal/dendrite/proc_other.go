//go:build !linux

package dendrite

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
