package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/objutil"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
)

// StreamingMode says whether the reflector fills its store from a
// streaming list (a watch with SendInitialEvents) or a plain list.
type StreamingMode int

const (
	// StreamingAuto tries a streaming list and falls back to a plain list
	// when it fails; once the source answers
	// listwatch.ErrStreamingListUnsupported, every later list is plain.
	// That refusal is expected of servers without streaming lists (before
	// Kubernetes 1.34, or the WatchList gate off), so it is not reported
	// to the error handler: it is logged with log/slog at level Debug.
	StreamingAuto StreamingMode = iota
	// StreamingOff always uses plain (paged) lists.
	StreamingOff
	// StreamingOn tries a streaming list every time, falling back to a
	// plain list for that attempt only when it fails. Every failure,
	// a refusal included, is reported.
	StreamingOn
)

// Defaults for the zero values in Options.
const (
	DefaultPageSize        = 500
	DefaultMinWatchTimeout = 5 * time.Minute
	DefaultBackoffInitial  = 800 * time.Millisecond
	DefaultBackoffMax      = 30 * time.Second
	DefaultBackoffReset    = 2 * time.Minute
	// DefaultInitialEventsTimeout bounds a streaming list's silence: how
	// long it may go without an initial event before its end bookmark.
	DefaultInitialEventsTimeout = time.Minute
	// DefaultBookmarkInterval is how often a kube-apiserver sends a
	// bookmark on a watch that asked for them (its cacher's default).
	DefaultBookmarkInterval = time.Minute
)

// Settings tune how a reflector lists and watches: page size, streaming
// lists, watch timeouts and back-off. The zero value takes every default.
// It is the one place these are set: informer.Options, the plain
// Controller's options and kube.FactoryOptions all carry a Settings.
type Settings struct {
	// PageSize is the list page size. Zero means DefaultPageSize, which is
	// dropped for lists at a specific resource version (so the server can
	// answer from its watch cache) unless an earlier list at "0" came back
	// paginated. A positive value is always used. Negative never pages.
	PageSize int64
	// Streaming selects streaming or plain lists. Zero is StreamingAuto.
	Streaming StreamingMode
	// MinWatchTimeout and MaxWatchTimeout bound the randomized timeout
	// asked of every watch. Defaults: DefaultMinWatchTimeout, and twice
	// the minimum.
	MinWatchTimeout, MaxWatchTimeout time.Duration
	// Back-off between failed attempts: starts at BackoffInitial, doubles
	// up to BackoffMax, with up to 100% jitter added, and starts over after
	// BackoffReset without a failure, or as soon as the source answers
	// again after it was unreachable. Zero values take the defaults.
	BackoffInitial, BackoffMax, BackoffReset time.Duration
	// InitialEventsTimeout bounds the silence of a streaming list: when
	// no initial event (an add) has come for this long and the bookmark
	// that ends the initial events has not either, the reflector closes the
	// stream, reports ErrInitialEventsTimeout and lists in pages instead
	// (a proxy that drops that bookmark would otherwise hang the informer
	// forever); with StreamingAuto, later lists are paged too. A list
	// whose objects keep coming is never cut off, however long it takes
	// (a million objects take minutes); the silence is noticed between
	// one and two timeouts after the last add. Adds after a change
	// (Modified, Deleted) do not count: a source sends changes only after
	// its initial events, so these are objects created since, and a busy
	// cluster's creations must not hide a lost bookmark. Zero means
	// DefaultInitialEventsTimeout; negative never times out.
	InitialEventsTimeout time.Duration
	// BookmarkInterval is how often the source sends bookmarks on a watch.
	// A watch through which nothing at all has come for longer than its
	// timeout plus BookmarkInterval is stalled (the server would have
	// closed it): the reflector closes it, reports ErrWatchStalled and
	// watches again from the last version. Zero means
	// DefaultBookmarkInterval.
	BookmarkInterval time.Duration
	// Server, when set, is shared by the reflectors of one server: when
	// one of them (or the Server's probe) gets an answer after the server
	// was unreachable, the others waiting out the outage try again within
	// its wake spread instead of sleeping out their back-off (see Server).
	// nil: each reflector waits out its own back-off. kube.NewFactory sets
	// one per factory.
	Server *Server
}

// Options configures a Reflector. Source and Store are required.
//
// What is listed and watched (namespace, label and field selectors) is the
// source's business: set it where the source is made (kube.SourceOptions).
// Resync is not the reflector's business either: it never talks to the
// server, so informers run it themselves.
type Options[T cache.Object] struct {
	// Name appears in reported errors. Defaults to "reflector".
	Name string
	// Source is listed and watched.
	Source listwatch.ListerWatcher[T]
	// Store receives every list (a relist session, or Replace),
	// Add/Update/Delete for every watch event and Bookmark for every
	// bookmark, all from the reflector's one goroutine. To fill a plain
	// cache.Store, wrap it in a cache.StoreWriter.
	Store cache.Writer[T]
	// KeyFunc keys the temporary map of a streaming list. Defaults to
	// cache.MetaNamespaceKey.
	KeyFunc cache.KeyFunc[T]
	// Settings tune listing, watching and back-off.
	Settings
	// ErrorHandler is told every failure; err wraps a
	// *listwatch.PhaseError naming the phase. Calls are serialized. When
	// nil, errors are logged with log/slog at level Error.
	ErrorHandler func(err error)
	// Clock drives back-off and watch-duration checks. Defaults to
	// clock.RealClock{}.
	Clock clock.WithTicker
	// Metrics, when set, is asked once (NewReflectorMetrics, with Name)
	// for the reflector's instruments.
	Metrics metrics.Provider
	// Resume, when set, is called once, first thing on the list-watch
	// goroutine, for a state to start from instead of a first list (a
	// checkpoint). nil means none: the reflector lists. An error is
	// reported, and Resume is called again after a back-off (return one
	// only for what may pass, such as a server that does not answer yet;
	// a state that cannot be trusted is nil).
	//
	// Nothing of a state reaches the store before the server has been
	// asked about its version, with a list of one object at exactly that
	// version, and a state's objects are not even read (Resume.Read) until
	// it has answered:
	//   - it succeeds: the store gets the state's objects (Store.Replace
	//     at its ResourceVersion), Confirmed is called, and the reflector
	//     watches from that version, so the changes made since arrive as
	//     events;
	//   - "expired" (410): the server no longer has that version. Unless
	//     the state says SkipExpired, the store gets its objects, and a
	//     relist (a consistent read) follows at once, which a DeltaFIFO
	//     over the same KnownObjects turns into the differences; with
	//     SkipExpired the objects are never read and the relist fills the
	//     store as a first list would. Confirmed follows that relist;
	//   - "too large resource version": the server is behind the state (a
	//     cluster restored from a backup, or another cluster). The state is
	//     dropped unread, reported with ErrResumeRefused, and the
	//     reflector lists as without one;
	//   - any other failure is reported and the question asked again after
	//     a back-off, the state held meanwhile.
	//
	// A state whose objects cannot be read after all (Resume.Read fails)
	// is reported and dropped, and the reflector lists as without one.
	Resume func(ctx context.Context) (*Resume[T], error)
	// Confirmed, when set, is called once, from the list-watch goroutine,
	// when the store first reflects the server: after the first list that
	// filled it, or, with Resume, once the server has confirmed the
	// resumed version (or a list replaced it).
	Confirmed func()
}

// Resume is a state a reflector starts from (see Options.Resume).
type Resume[T cache.Object] struct {
	// ResourceVersion is the version of the state, which must not be
	// empty.
	ResourceVersion string
	// Items are the objects of the state, at ResourceVersion, when Read
	// is nil.
	Items []T
	// Read, when set, reads the objects of the state instead of Items. The
	// reflector calls it at most once, on its own goroutine, and only
	// after the server has answered about ResourceVersion (so that a
	// state the server refuses, or an expired one with SkipExpired, costs
	// no read). An error drops the state (reported).
	Read func() ([]T, error)
	// SkipExpired: when the server no longer has ResourceVersion, the
	// reflector relists without reading the state's objects. Reading them
	// pays when decoding an object costs more than looking it up (a
	// relist then hands back the state's objects unchanged, and queues
	// only the differences); for small objects it does not, and the read
	// only comes before the relist.
	SkipExpired bool
}

// Errors the reflector reports (wrapped in a *listwatch.PhaseError).
var (
	// ErrResumeRefused: the server is behind the version of the state
	// Options.Resume gave (it answered "too large resource version"), so
	// the state is not of this server's history and was dropped unseen.
	ErrResumeRefused = errors.New("resumed state refused: the server is behind its resource version")
	// ErrMissingResourceVersion: a list (or the bookmark ending a
	// streaming list) carried no resource version, so there is nothing to
	// watch from. The list is discarded and retried after a back-off.
	ErrMissingResourceVersion = errors.New("list has no resource version")
	// ErrVeryShortWatch: a watch ended cleanly in under a second without
	// delivering anything. The reflector relists after a back-off.
	ErrVeryShortWatch = errors.New("very short watch: closed in under a second with no events")
	// ErrInitialEventsIncomplete: a streaming list ended before the
	// bookmark that marks the end of the initial events.
	ErrInitialEventsIncomplete = errors.New("stream ended before the initial-events-end bookmark")
	// ErrInitialEventsTimeout: a streaming list went silent for
	// Settings.InitialEventsTimeout before its end bookmark; the reflector
	// falls back to a paged list.
	ErrInitialEventsTimeout = errors.New("silent before the initial-events-end bookmark: falling back to a paged list")
	// ErrWatchStalled: nothing came through a watch for longer than its
	// timeout plus Settings.BookmarkInterval; the reflector closed it and
	// watches again.
	ErrWatchStalled = errors.New("watch stalled: nothing received past its timeout plus the bookmark interval")
	// ErrUnknownEventType: an event with a type the reflector does not
	// know; it is skipped.
	ErrUnknownEventType = errors.New("unknown event type")
	// ErrNilObject: a listed object or an event's object was nil; it is
	// skipped.
	ErrNilObject = errors.New("nil object")
	// ErrAlreadyRunning: Run was called more than once.
	ErrAlreadyRunning = errors.New("reflector: Run called more than once")
)

// validKey computes obj's key, refusing a nil object (which a buggy
// source could send and a key function would dereference).
func validKey[T cache.Object](keyFunc cache.KeyFunc[T], obj T) (string, error) {
	if isNil(obj) {
		return "", ErrNilObject
	}
	return keyFunc(obj)
}

// checkKey returns the error validKey would return for obj, without
// building the key when the key function is the default: a streaming list
// checks every added object, and only needs the key of a change (the
// store keys each object itself), so a key built per listed object would
// be garbage.
func (r *Reflector[T]) checkKey(obj T) error {
	if isNil(obj) {
		return ErrNilObject
	}
	if r.defaultKey {
		return cache.CheckMetaNamespaceKey(obj)
	}
	_, err := r.keyFunc(obj)
	return err
}

// isNil is the one nil check of kinformer (objutil.IsNil): a nil object,
// which a buggy source could send and a key function would dereference.
func isNil[T cache.Object](obj T) bool { return objutil.IsNil(obj) }

// describe names obj in an error message; it is safe on a nil object.
func describe[T cache.Object](obj T) string {
	if isNil(obj) {
		return "<nil>"
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func (o *Options[T]) validate() error {
	if o.Source == nil {
		return errors.New("reflector: Options.Source is nil")
	}
	if o.Store == nil {
		return errors.New("reflector: Options.Store is nil")
	}
	if o.Streaming < StreamingAuto || o.Streaming > StreamingOn {
		return fmt.Errorf("reflector: unknown streaming mode %d", o.Streaming)
	}
	if o.MaxWatchTimeout != 0 && o.MaxWatchTimeout < o.MinWatchTimeout {
		return fmt.Errorf("reflector: MaxWatchTimeout %v below MinWatchTimeout %v", o.MaxWatchTimeout, o.MinWatchTimeout)
	}
	return nil
}
