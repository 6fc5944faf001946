//go:build !unix

package scenario

import "time"

// CPUTimer reads 0 on this platform.
func CPUTimer() func() time.Duration { return func() time.Duration { return 0 } }

// processCPU is not available on this platform; CPU figures read 0.
func processCPU() time.Duration { return 0 }
