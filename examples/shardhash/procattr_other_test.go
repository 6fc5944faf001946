//go:build !linux

package main

import "syscall"

// dieWithParent has no portable equivalent outside Linux: the test stops
// its replicas itself.
func dieWithParent() *syscall.SysProcAttr { return nil }
