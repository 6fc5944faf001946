//go:build !unix

package intern

import "time"

// processCPU is not available on this platform; cpu-ns/pod reads 0.
func processCPU() time.Duration { return 0 }
