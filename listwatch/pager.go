package listwatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/kinformer/kinformer/cache"
)

// Lister is the list half of a ListerWatcher: all the pager needs.
type Lister[T cache.Object] interface {
	List(ctx context.Context, opts Options) (Page[T], error)
}

// ListResult is a whole list assembled from one or more pages.
type ListResult[T cache.Object] struct {
	// Items holds every object, in the order the source served them.
	Items []T
	// ResourceVersion is the version the list was served at: the first
	// page's version (every later page belongs to the same snapshot), or
	// the full list's version after a fallback.
	ResourceVersion string
	// Paginated reports that the source split the answer into more than
	// one page (the first page carried a continue token).
	Paginated bool
	// FullListFallback reports that a continue token expired mid-walk and
	// the result comes from one unpaged list instead.
	FullListFallback bool
}

// ListAll lists everything opts selects, pageSize objects at a time
// (pageSize 0 asks for one unpaged list; opts.Limit and opts.Continue are
// ignored). It follows continue tokens until the last page. Later pages
// are requested with an empty resource version, as the server requires
// with a continue token; the token itself pins the snapshot.
//
// When a continue token has expired (the source answers ErrExpired to a
// page other than the first), ListAll discards the pages it has and
// lists once more without a limit at opts' resource version; that list's
// result or error is returned. An error on the first page is returned as
// is. Errors are not tagged with a phase: callers know which phase they
// are in.
func ListAll[T cache.Object](ctx context.Context, src Lister[T], opts Options, pageSize int64) (ListResult[T], error) {
	var items []T
	res, err := ListPages(ctx, src, opts, pageSize, func(page Page[T], restart bool) error {
		if restart {
			items = nil
		}
		if items == nil {
			items = page.Items // the first page's slice, kept as it is
		} else {
			items = append(items, page.Items...)
		}
		return nil
	})
	res.Items = items
	if err != nil {
		return ListResult[T]{}, err
	}
	return res, nil
}

// ListPages lists as ListAll does, handing visit each page as it arrives
// instead of assembling their items; the result's Items stays nil. restart
// is true when the pages visited so far are void: the full list after an
// expired continue token starts over at another version, so whatever the
// caller kept of the earlier pages must be dropped. An error from visit
// ends the list and is returned as is.
func ListPages[T cache.Object](ctx context.Context, src Lister[T], opts Options, pageSize int64, visit func(page Page[T], restart bool) error) (ListResult[T], error) {
	first := opts
	first.Limit = pageSize
	first.Continue = ""
	page, err := src.List(ctx, first)
	if err != nil {
		return ListResult[T]{}, err
	}
	res := ListResult[T]{
		ResourceVersion: page.ResourceVersion,
		Paginated:       page.Continue != "",
	}
	if err := visit(page, false); err != nil {
		return ListResult[T]{}, err
	}
	next := page.Continue
	for next != "" {
		if err := ctx.Err(); err != nil {
			return ListResult[T]{}, err
		}
		more := opts
		more.ResourceVersion = ""
		more.ResourceVersionMatch = MatchDefault
		more.Limit = pageSize
		more.Continue = next
		page, err = src.List(ctx, more)
		if errors.Is(err, ErrExpired) {
			return fullList(ctx, src, opts, visit)
		}
		if err != nil {
			return ListResult[T]{}, err
		}
		if err := visit(page, false); err != nil {
			return ListResult[T]{}, err
		}
		next = page.Continue
	}
	return res, nil
}

// fullList is the fallback after an expired continue token: one unpaged
// list at the caller's original resource version.
func fullList[T cache.Object](ctx context.Context, src Lister[T], opts Options, visit func(Page[T], bool) error) (ListResult[T], error) {
	opts.Limit = 0
	opts.Continue = ""
	page, err := src.List(ctx, opts)
	if err != nil {
		return ListResult[T]{}, fmt.Errorf("full list after an expired continue token: %w", err)
	}
	if page.Continue != "" {
		return ListResult[T]{}, fmt.Errorf("full list after an expired continue token: source paginated an unlimited list")
	}
	if err := visit(page, true); err != nil {
		return ListResult[T]{}, err
	}
	return ListResult[T]{
		ResourceVersion:  page.ResourceVersion,
		Paginated:        true,
		FullListFallback: true,
	}, nil
}
