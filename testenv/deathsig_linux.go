package testenv

import "syscall"

// setDeathSignal asks the kernel to SIGKILL the child when the OS thread that started it
// exits, which covers the test binary being killed without running its clean-up. Go does not
// end threads while the process lives (except threads locked by a goroutine that exits
// without unlocking, which testenv never does), so in practice the child dies with the
// process that started it.
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
