//go:build unix

package checkpoint

import "syscall"

// openFlags makes opening a FIFO with no writer (or a device that would
// wait) return at once; on a regular file O_NONBLOCK changes nothing.
const openFlags = syscall.O_NONBLOCK
