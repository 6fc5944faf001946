//go:build !linux

package testenv

import "syscall"

// setDeathSignal does nothing outside Linux, which has no parent-death signal: there a child
// outlives a test binary that is killed before it can call Env.Stop.
func setDeathSignal(*syscall.SysProcAttr) {}
