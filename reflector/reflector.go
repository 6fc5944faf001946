// Package reflector keeps a store equal to a source's state: it lists,
// replaces the store's content with the list, then watches from the
// list's resource version and applies every event, starting over whenever
// the source says it must. It is the engine under every informer.
package reflector

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
)

// Reflector mirrors a source into a store. Build one with New and start
// it with Run.
//
// The rules it follows (each a state transition in Run's loop):
//   - The first list asks for resource version "0" (any cached version).
//     Later lists ask for the last version seen, except after the source
//     answered "expired" or "too large resource version" to a list, when
//     they ask for "" (a consistent read) until one succeeds. A list at a
//     version that answers either error is retried at once at "".
//   - Lists are paged (see Options.PageSize); an expired continue token
//     falls back to one full list. The list's items go to the store's
//     relist session (cache.Writer.BeginRelist) page by page as they
//     arrive (a streaming list's, event by event), the session finishing
//     at the list's version when the list ends and aborted when it fails;
//     pages voided by an expired continue token start a new session. A
//     store that takes the list whole (a first list) gets Store.Replace.
//   - A list without a resource version is reported and retried.
//   - With streaming lists (Options.Streaming), the store is filled from
//     a watch with SendInitialEvents that ends at the bookmark marked
//     InitialEventsEnd, and the same stream then carries on as the watch.
//     A failed streaming list falls back to a plain list, and so does one
//     that went silent for InitialEventsTimeout before its end bookmark
//     (ErrInitialEventsTimeout; with StreamingAuto, for good).
//   - The watch starts at the list's version, with bookmarks and a
//     timeout random between Options.MinWatchTimeout and MaxWatchTimeout.
//     Bookmarks only advance the version (and go to Store.Bookmark). A
//     watch that ends cleanly is reopened at the last version seen, at
//     once; one that ends cleanly in under a second with no events is
//     reported and followed by a relist.
//   - "Unavailable" (connection refused or reset) while opening or reading
//     a watch backs off and reopens the watch, without relisting. Any
//     other watch failure, an Error event included, backs off and relists
//     at the last version seen.
//   - A watch through which nothing has come for longer than its timeout
//     plus BookmarkInterval is stalled: it is closed, reported
//     (ErrWatchStalled) and reopened at the last version seen.
//   - Events the source could not decode into T, nil objects, and
//     objects the store refuses (its key function or Transform failed) are
//     reported and skipped. A Replace error wrapping cache.ErrSkipped is
//     such a report, not a failed list: the reflector goes on to watch.
//   - Back-off grows from 800 ms to 30 s with jitter and starts over after
//     two minutes without failures, or as soon as the source answers again
//     after being unavailable (so the relist after an outage that ended
//     in "expired" is not delayed by the outage's back-off).
//   - With Settings.Server shared by the reflectors of one server, a
//     reflector waiting out an outage ("unavailable") retries within the
//     Server's wake spread (1 s) once the server answers again, whether the
//     answer came to another reflector or to the Server's probe; if that
//     retry fails, it waits out its own back-off until a request succeeds.
//
// With Options.Resume the reflector starts from a saved state instead of
// a list: the server confirms its version first, then the store gets it
// and the reflector watches from that version (see Options.Resume); an
// "expired" answer leads to a relist at once, a "too large" one to a
// plain start.
//
// Progress reports the list under way (objects, bytes, pages, the
// server's remaining count and an ETA), fallbacks and stalled watches.
//
// Every failure reaches Options.ErrorHandler, wrapped in a
// *listwatch.PhaseError naming the phase.
type Reflector[T cache.Object] struct {
	name    string
	src     listwatch.ListerWatcher[T]
	store   cache.Writer[T]
	keyFunc cache.KeyFunc[T]
	// defaultKey: keyFunc is cache.MetaNamespaceKey, Options.KeyFunc
	// being nil (checkKey).
	defaultKey bool
	pageSize   int64
	streaming  StreamingMode
	minWatch   time.Duration
	maxWatch   time.Duration
	// initialEvents bounds a streaming list's silence (<0: never);
	// bookmarks is the source's bookmark interval.
	initialEvents time.Duration
	bookmarks     time.Duration
	handler       func(error)
	clock         clock.WithTicker
	m             metrics.ReflectorMetrics // updated by the list-watch loop only
	progress      *progress

	started atomic.Bool // set by the first Run

	// load is Options.Resume, confirmed its callback, resume the state
	// load gave while the server has not confirmed it; all owned by the
	// list-watch loop.
	load      func(context.Context) (*Resume[T], error)
	resume    *Resume[T]
	confirmed func()

	reportMu sync.Mutex // serializes calls to handler

	rvMu   sync.Mutex // guards lastRV and rvChanged
	lastRV string     // the version the store reflects; "" before the first list
	// rvChanged, made by VersionChanged for waiters, is closed and cleared
	// by the next setLastRV.
	rvChanged chan struct{}

	// Owned by the list-watch loop goroutine (Run's caller):
	backoff backoff
	// server is Settings.Server (nil: none). earlyWake: the reflector may
	// be woken by it from an outage's back-off (false after an early try
	// failed, until a request succeeds); wokenEarly: the current attempt
	// follows such a wake.
	server                *Server
	earlyWake, wokenEarly bool
	// failing is the reason of the latest failure (metrics.Failure*), ""
	// once a request succeeded since.
	failing         string
	rvUnavailable   bool // the last list at a version answered expired / too large
	paginated       bool // a list at "0" came back in pages: keep paging
	streamingBroken bool // StreamingAuto met ErrStreamingListUnsupported
}

// New checks opts and returns a reflector that has not started.
func New[T cache.Object](opts Options[T]) (*Reflector[T], error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	r := &Reflector[T]{
		name:      opts.Name,
		src:       opts.Source,
		store:     opts.Store,
		keyFunc:   opts.KeyFunc,
		pageSize:  opts.PageSize,
		streaming: opts.Streaming,
		minWatch:  opts.MinWatchTimeout,
		maxWatch:  opts.MaxWatchTimeout,
		handler:   opts.ErrorHandler,
		clock:     opts.Clock,
		progress:  newProgress(),
		load:      opts.Resume,
		confirmed: opts.Confirmed,
		server:    opts.Server,
		earlyWake: true,
	}
	if r.name == "" {
		r.name = "reflector"
	}
	if r.keyFunc == nil {
		r.keyFunc, r.defaultKey = cache.MetaNamespaceKey[T], true
	}
	if r.minWatch <= 0 {
		r.minWatch = DefaultMinWatchTimeout
	}
	if r.maxWatch <= 0 {
		r.maxWatch = 2 * r.minWatch
	}
	r.initialEvents = opts.InitialEventsTimeout
	if r.initialEvents == 0 {
		r.initialEvents = DefaultInitialEventsTimeout
	}
	r.bookmarks = orDefault(opts.BookmarkInterval, DefaultBookmarkInterval)
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	if opts.Metrics != nil {
		r.m = opts.Metrics.NewReflectorMetrics(r.name)
	}
	r.m = r.m.WithDefaults()
	r.backoff = backoff{
		initial: orDefault(opts.BackoffInitial, DefaultBackoffInitial),
		max:     orDefault(opts.BackoffMax, DefaultBackoffMax),
		reset:   orDefault(opts.BackoffReset, DefaultBackoffReset),
		clock:   r.clock,
	}
	return r, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// LastSyncResourceVersion returns the resource version the store last
// reflected: that of the last list, event or bookmark applied. It is ""
// before the first list. Safe for concurrent use.
func (r *Reflector[T]) LastSyncResourceVersion() string {
	r.rvMu.Lock()
	defer r.rvMu.Unlock()
	return r.lastRV
}

// Progress returns a snapshot of the reflector's lists (see Progress).
// Safe for concurrent use.
func (r *Reflector[T]) Progress() Progress { return r.progress.snapshot() }

// VersionChanged returns a channel that is closed the next time the
// version LastSyncResourceVersion returns is set: by a list, an event or
// a bookmark. To wait for a version, take the channel, then read
// LastSyncResourceVersion, then wait on the channel if it is not there
// yet. Safe for concurrent use; it costs the reflector nothing while
// nobody waits.
func (r *Reflector[T]) VersionChanged() <-chan struct{} {
	r.rvMu.Lock()
	defer r.rvMu.Unlock()
	if r.rvChanged == nil {
		r.rvChanged = make(chan struct{})
	}
	return r.rvChanged
}

func (r *Reflector[T]) setLastRV(rv string) {
	r.rvMu.Lock()
	r.lastRV = rv
	if r.rvChanged != nil {
		close(r.rvChanged)
		r.rvChanged = nil
	}
	r.rvMu.Unlock()
	if n, err := strconv.ParseUint(rv, 10, 64); err == nil {
		r.m.LastResourceVersion.Set(float64(n))
	}
}

// listed reports a list of mode that filled the store with items objects;
// other is the other mode's instruments.
func (r *Reflector[T]) listed(mode, other *metrics.ListMetrics, items int) {
	mode.Items.Observe(float64(items))
	mode.Last.Set(1)
	other.Last.Set(0)
}

// Run lists and watches, on the calling goroutine, until ctx is done, then
// returns nil. A Reflector runs once; a second call returns
// ErrAlreadyRunning.
func (r *Reflector[T]) Run(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	r.loop(ctx)
	return nil
}

// stateKind is what the loop does next.
type stateKind int

const (
	stateList   stateKind = iota // list (or stream a list) and replace the store
	stateWatch                   // watch from the last version and apply events
	stateResume                  // load Options.Resume, have it confirmed, fill the store, watch
)

// state is one node of the list-watch state machine.
type state[T cache.Object] struct {
	kind stateKind
	// backoff: wait a back-off delay before acting.
	backoff bool
	// stream, in stateWatch, is a stream already open (the rest of a
	// streaming list) to read instead of opening a new watch, asked for
	// with timeout.
	stream  listwatch.Watch[T]
	timeout time.Duration
}

// loop runs the state machine until ctx is done.
func (r *Reflector[T]) loop(ctx context.Context) {
	st := state[T]{kind: stateList}
	if r.load != nil {
		st.kind = stateResume
	}
	for {
		if st.backoff && !r.waitBackoff(ctx) {
			break
		}
		if ctx.Err() != nil {
			break
		}
		switch st.kind {
		case stateList:
			st = r.list(ctx)
		case stateWatch:
			st = r.watch(ctx, st.stream, st.timeout)
		case stateResume:
			st = r.resumeFrom(ctx)
		}
	}
	if st.stream != nil {
		st.stream.Close()
	}
}

// waitBackoff waits a back-off delay before the next attempt; false if
// ctx ended first. After an outage (the last failure found the source
// unavailable), a shared Server cuts the wait short when the server
// answers again: the attempt then comes at a moment drawn from the
// Server's wake spread, so the reflectors of one server do not all send
// their request at once.
func (r *Reflector[T]) waitBackoff(ctx context.Context) bool {
	d := r.backoff.delay()
	var back <-chan struct{}
	if r.server != nil && r.backoff.outage && r.earlyWake {
		if back = r.server.backCh(); back == nil {
			// The server has answered since this reflector's failure.
			if w := r.server.wakeDelay(); w < d {
				d = w
				r.wokenEarly = true
			}
		}
	}
	r.m.Backoff.Observe(d.Seconds())
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	case <-back:
		r.wokenEarly = true
		return r.sleep(ctx, r.server.wakeDelay())
	}
}

// sleep waits d on the clock; false if ctx ended first.
func (r *Reflector[T]) sleep(ctx context.Context, d time.Duration) bool {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// watchTimeout picks a watch timeout in [minWatch, maxWatch], in seconds.
func (r *Reflector[T]) watchTimeout() int64 {
	d := r.minWatch + time.Duration(rand.Float64()*float64(r.maxWatch-r.minWatch))
	return int64(d / time.Second)
}

// report hands err, tagged with phase, to the error handler.
func (r *Reflector[T]) report(phase listwatch.Phase, err error) {
	err = fmt.Errorf("%s: %w", r.name, &listwatch.PhaseError{Phase: phase, Err: err})
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	if r.handler != nil {
		r.handler(err)
		return
	}
	slog.Error("kinformer reflector", "err", err)
}
