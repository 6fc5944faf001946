package cache

import (
	"errors"
	"fmt"
	"strings"
)

// ErrSkipped: a write of a whole list (DeltaFIFO.Replace) applied every
// item but some that it could not use, which it skipped. The detail is a
// *SkippedError. It is a report, not a failure: retrying the same list
// would skip the same items.
var ErrSkipped = errors.New("objects skipped")

// SkippedError lists the items a Replace skipped: nil, rejected by a
// Transform, or whose key could not be computed. Every other item was
// applied. It matches ErrSkipped; errors.Is and errors.As also look inside
// each item's error (a Transform's own error, ErrInvalidObject, a key
// function's error).
type SkippedError struct {
	// Errs holds the error of each skipped item, in list order; each names
	// the item's position in the list and its namespace/name.
	Errs []error
	// Total is the number of items in the list, skipped ones included.
	Total int
}

// maxListed is the number of item errors Error spells out.
const maxListed = 3

func (e *SkippedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "skipped %d of %d objects: ", len(e.Errs), e.Total)
	for i, err := range e.Errs[:min(len(e.Errs), maxListed)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	if more := len(e.Errs) - maxListed; more > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return b.String()
}

// Is reports whether target is ErrSkipped.
func (e *SkippedError) Is(target error) bool { return target == ErrSkipped }

// Unwrap returns the error of each skipped item.
func (e *SkippedError) Unwrap() []error { return e.Errs }
