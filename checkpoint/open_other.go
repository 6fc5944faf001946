//go:build !unix

package checkpoint

// openFlags: no non-blocking open outside Unix, where FIFOs that block an
// open do not exist in the same form.
const openFlags = 0
