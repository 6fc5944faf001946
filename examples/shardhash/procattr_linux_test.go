package main

import "syscall"

// dieWithParent makes a replica get SIGKILL if the test binary dies
// without stopping it.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
