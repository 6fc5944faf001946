package goprogress

import "syscall"

// setDeathSignal asks the kernel to SIGKILL the go command when the thread that started it
// exits, so a build does not outlive the process that wanted it.
func setDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
