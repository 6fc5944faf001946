//go:build !linux

package goprogress

import "syscall"

// setDeathSignal does nothing outside Linux, which has no parent-death signal.
func setDeathSignal(*syscall.SysProcAttr) {}
