// Package listwatch defines the contract between a source of objects (a
// kube-apiserver, or the in-memory fake in listwatch/fake) and the reflector
// that mirrors it: paged lists, watch streams of typed events, and the errors
// a source reports.
package listwatch

import (
	"context"

	"github.com/kinformer/kinformer/cache"
)

// ResourceVersionMatch says how a list interprets Options.ResourceVersion.
type ResourceVersionMatch string

const (
	// MatchDefault leaves the interpretation to the server: "0" means any
	// cached version, "" a consistent read, anything else not older than.
	MatchDefault ResourceVersionMatch = ""
	// MatchNotOlderThan asks for data at least as new as the version.
	MatchNotOlderThan ResourceVersionMatch = "NotOlderThan"
	// MatchExact asks for data at exactly the version.
	MatchExact ResourceVersionMatch = "Exact"
)

// Options are the parameters of one List or Watch call. Fields that do not
// apply to the call are ignored.
type Options struct {
	// ResourceVersion and ResourceVersionMatch select the version to list
	// at, or to watch from.
	ResourceVersion      string
	ResourceVersionMatch ResourceVersionMatch
	// LabelSelector and FieldSelector filter objects, in the server's
	// string syntax.
	LabelSelector string
	FieldSelector string
	// Limit and Continue page a list. Limit 0 asks for everything.
	Limit    int64
	Continue string
	// TimeoutSeconds bounds a watch; the server closes it after that long.
	TimeoutSeconds int64
	// AllowBookmarks asks for Bookmark events on a watch.
	AllowBookmarks bool
	// SendInitialEvents asks a watch to start with an Added event for every
	// object (a streaming list), ended by a Bookmark with InitialEventsEnd.
	SendInitialEvents bool
}

// Page is one page of a list.
type Page[T cache.Object] struct {
	Items []T
	// ResourceVersion is the version the list was served at.
	ResourceVersion string
	// Continue, when not empty, fetches the next page.
	Continue string
	// RemainingItemCount, when the server knows it, counts the items in the
	// pages after this one.
	RemainingItemCount *int64
	// Bytes is the page's size on the wire, when the source knows it (0
	// otherwise): for progress reports.
	Bytes int64
}

// EventType names what a watch event means.
type EventType string

const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// Event is one notification from a watch.
type Event[T cache.Object] struct {
	Type EventType
	// Object is the object's new state (Added, Modified), its last state
	// (Deleted), or, for a Bookmark, an object carrying only a resource
	// version. It is the zero T for Error.
	Object T
	// ResourceVersion is Object's resource version, for every type but Error.
	ResourceVersion string
	// InitialEventsEnd is set on the Bookmark that ends a streaming list.
	InitialEventsEnd bool
	// Err is set for Error, mapped onto this package's errors where one
	// fits (so errors.Is(ev.Err, ErrExpired) works).
	Err error
	// Bytes is the event's size on the wire, when the source knows it (0
	// otherwise): for progress reports.
	Bytes int64
}

// Watch is an open stream of events. It belongs to whoever called
// ListerWatcher.Watch, who must Close it.
type Watch[T cache.Object] interface {
	// Next blocks until the next event and returns it. It returns io.EOF
	// when the stream ends cleanly (server timeout, Close, or cancellation
	// of the context Watch was called with), and any other error when the
	// stream broke. Next is not safe for concurrent use.
	Next() (Event[T], error)
	// Close ends the stream and unblocks a pending Next. It is safe to call
	// more than once and from any goroutine.
	Close() error
}

// ListerWatcher is a source of objects of type T.
type ListerWatcher[T cache.Object] interface {
	// List returns one page of objects.
	List(ctx context.Context, opts Options) (Page[T], error)
	// Watch opens a stream of changes. The stream ends when ctx is done.
	Watch(ctx context.Context, opts Options) (Watch[T], error)
}
