package project

import "unsafe"

// unsafeData is the address of s's bytes, to tell shared strings apart.
func unsafeData(s string) *byte { return unsafe.StringData(s) }
