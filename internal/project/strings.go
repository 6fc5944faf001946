package project

import "sync"

// Bounds of a string table (the same as internal/intern's).
const (
	maxString  = 256     // longer strings are never interned
	maxStrings = 1 << 16 // a full table is emptied and starts again
)

// Strings is a source's string table: the strings views decoded through
// it share one copy of each repeated value (label keys and values,
// namespaces, images, owner kinds). Go strings are immutable, so no
// caller can tell. It is bounded (see maxString and maxStrings) and safe
// for concurrent use: a decode holds its lock for a whole object.
type Strings struct {
	mu sync.Mutex
	m  map[string]string // guarded by mu
}

// NewStrings returns an empty table.
func NewStrings() *Strings { return &Strings{m: make(map[string]string)} }

// getLocked returns the table's copy of b, adding one. s.mu is held.
func (s *Strings) getLocked(b []byte) string {
	if v, ok := s.m[string(b)]; ok { // no allocation for the lookup
		return v
	}
	v := string(b)
	if len(b) > maxString {
		return v
	}
	if len(s.m) >= maxStrings {
		clear(s.m)
	}
	s.m[v] = v
	return v
}
