//go:build unix

package scenario

import (
	"syscall"
	"time"
)

// CPUTimer returns the process CPU time used since it was called, for
// Result.CPU:
//
//	cpu := CPUTimer()
//	... measured work ...
//	result.CPU = cpu()
func CPUTimer() func() time.Duration {
	start := processCPU()
	return func() time.Duration { return processCPU() - start }
}

// processCPU returns the CPU time (user + system) the process has used so
// far, or 0 if it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
