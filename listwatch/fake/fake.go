// Package fake is an in-memory listwatch.ListerWatcher for tests: a
// truth store with a resource-version counter, a compaction window,
// pagination, bookmarks, streaming lists, and fault injection that plays
// back what a real kube-apiserver does to its clients.
//
// Resource versions are decimal integers. Every Create, Update and Delete
// bumps the version by one and is fanned out to every open watch. The
// source keeps a log of changes since its compaction point, so it can
// serve a watch from any version at or after that point, a list at an
// exact past version, and continue tokens that pin a snapshot; anything
// older answers listwatch.ErrExpired. Batch makes several changes at
// once: each watch has them all queued before its reader can take one.
//
// Each watch is a queue filled by the writer and drained by Next; there is
// no goroutine per watch. All methods are safe for concurrent use.
package fake

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// Object is what the fake stores: a cache.Object whose resource version
// the fake can set.
type Object interface {
	cache.Object
	SetResourceVersion(version string)
}

// Errors the truth-mutating methods return.
var (
	ErrExists   = errors.New("fake: object already exists")
	ErrNotFound = errors.New("fake: object not found")
	ErrInvalid  = errors.New("fake: invalid request")
)

// Options configures a Source. The zero value is valid for types that
// implement runtime.Object.
type Options[T Object] struct {
	// DeepCopy copies an object. When nil, the object's DeepCopyObject
	// method is used; New fails if T has neither.
	DeepCopy func(T) T
	// CompactionWindow, when positive, keeps only that many versions of
	// history: after each write, versions older than the current one minus
	// the window answer ErrExpired. Zero compacts only on Compact.
	CompactionWindow int64
	// ServeZeroFromCache makes lists at resource version "0" ignore Limit,
	// as kube-apiserver's watch cache does.
	ServeZeroFromCache bool
	// StreamingListUnsupported makes watches with SendInitialEvents fail
	// with listwatch.ErrStreamingListUnsupported.
	StreamingListUnsupported bool
	// Filter, when set, decides which objects a request's selectors match
	// (the fake does not parse selectors). A watched object that stops
	// matching is delivered as Deleted, one that starts matching as Added.
	Filter func(obj T, opts listwatch.Options) bool
	// OnList and OnWatch, when set, run before each List and Watch is
	// served (after refusals); a non-nil error is returned to the caller
	// as is. They run without the source's lock held.
	OnList  func(opts listwatch.Options) error
	OnWatch func(opts listwatch.Options) error
	// Clock times watch timeouts (Options.TimeoutSeconds) and RefuseFor.
	// Defaults to clock.RealClock{}.
	Clock clock.WithTicker
}

// Stats counts what the source served and every fault it fired.
type Stats struct {
	Lists, Watches, Events int
	// Faults, by kind.
	Refused, Resets, EarlyCloses, Closes, Drops, ErrorEvents, WrongTypes int
	// Expired counts requests answered with listwatch.ErrExpired (as an
	// error or as an Error event), whatever the cause.
	Expired int
	// Compactions counts calls to Compact.
	Compactions int
}

// Faults sums the fault counters.
func (s Stats) Faults() int {
	return s.Refused + s.Resets + s.EarlyCloses + s.Closes + s.Drops + s.ErrorEvents + s.WrongTypes + s.Compactions
}

// change is one entry of the history log.
type change[T Object] struct {
	rv      int64
	key     string
	typ     listwatch.EventType
	obj     T // the new state; for Deleted, the last state at rv
	prev    T // the state before, valid when hadPrev
	hadPrev bool
}

// Source is the in-memory source. Create it with New.
type Source[T Object] struct {
	opts     Options[T]
	deepCopy func(T) T
	clock    clock.WithTicker

	mu sync.Mutex // guards every field below
	// rv is the current resource version; base is the compaction point:
	// log holds the changes with versions in (base, rv], log[i] at version
	// base+1+i (see compactToLocked for how it is trimmed).
	rv, base int64
	objects  map[string]T
	log      []change[T]
	watches  map[*watch[T]]struct{}
	calls    struct{ lists, watches []listwatch.Options }
	stats    Stats
	// fault knobs
	refuseNext     int
	refuseUntilSet bool
	refuseUntil    int64 // unix nanoseconds on opts.Clock
	closeNext      int
	// held are faults fired when no open watch could take them, at most
	// one of each kind, in the order fired; see takeHeldLocked.
	held []fault
}

// New returns an empty source at resource version 1.
func New[T Object](opts Options[T]) (*Source[T], error) {
	s := &Source[T]{
		opts:     opts,
		deepCopy: opts.DeepCopy,
		clock:    opts.Clock,
		rv:       1,
		base:     1,
		objects:  map[string]T{},
		watches:  map[*watch[T]]struct{}{},
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	if s.deepCopy == nil {
		var zero T
		if _, ok := any(zero).(runtime.Object); !ok {
			return nil, fmt.Errorf("fake: %T has no DeepCopyObject method; set Options.DeepCopy", zero)
		}
		s.deepCopy = func(obj T) T { return any(obj).(runtime.Object).DeepCopyObject().(T) }
	}
	if opts.CompactionWindow < 0 {
		return nil, fmt.Errorf("fake: negative compaction window %d", opts.CompactionWindow)
	}
	return s, nil
}

// Key is the key the fake files an object under: "namespace/name", or
// "name" for a cluster-scoped object.
func Key(obj cache.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// Create stores a copy of obj at a new resource version and returns the
// stored copy. It fails with ErrExists if the key is taken.
func (s *Source[T]) Create(obj T) (T, error) { return s.write(listwatch.Added, obj) }

// Update replaces the stored object under obj's key with a copy of obj at
// a new resource version. It fails with ErrNotFound if there is none.
func (s *Source[T]) Update(obj T) (T, error) { return s.write(listwatch.Modified, obj) }

// Delete removes the object under namespace/name at a new resource
// version; watchers see its last state stamped with that version.
func (s *Source[T]) Delete(namespace, name string) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleteLocked(namespace, name)
}

func (s *Source[T]) deleteLocked(namespace, name string) (T, error) {
	var zero T
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	prev, ok := s.objects[key]
	if !ok {
		return zero, fmt.Errorf("delete %s: %w", key, ErrNotFound)
	}
	obj := s.deepCopy(prev)
	s.commitLocked(change[T]{typ: listwatch.Deleted, key: key, obj: obj, prev: prev, hadPrev: true})
	delete(s.objects, key)
	return s.deepCopy(obj), nil
}

func (s *Source[T]) write(typ listwatch.EventType, in T) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(typ, in)
}

func (s *Source[T]) writeLocked(typ listwatch.EventType, in T) (T, error) {
	var zero T
	if in.GetName() == "" {
		return zero, fmt.Errorf("%s: empty name: %w", typ, ErrInvalid)
	}
	key := Key(in)
	prev, exists := s.objects[key]
	switch {
	case typ == listwatch.Added && exists:
		return zero, fmt.Errorf("create %s: %w", key, ErrExists)
	case typ == listwatch.Modified && !exists:
		return zero, fmt.Errorf("update %s: %w", key, ErrNotFound)
	}
	obj := s.deepCopy(in)
	s.commitLocked(change[T]{typ: typ, key: key, obj: obj, prev: prev, hadPrev: exists})
	s.objects[key] = obj
	return s.deepCopy(obj), nil
}

// Batch runs fn, whose writes through b are Create, Update and Delete of
// the source, while holding every watch back: a watch's reader sees none
// of the batch's changes before all of them are queued, as when a server
// sends several changes in one read. It is not a transaction: the writes
// before one that fails stay. Batch returns fn's error. fn must not call
// the source's other methods.
func (s *Source[T]) Batch(fn func(b Batch[T]) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(Batch[T]{s: s})
}

// Batch writes to a source within Source.Batch.
type Batch[T Object] struct{ s *Source[T] }

// Create is Source.Create within a batch.
func (b Batch[T]) Create(obj T) (T, error) { return b.s.writeLocked(listwatch.Added, obj) }

// Update is Source.Update within a batch.
func (b Batch[T]) Update(obj T) (T, error) { return b.s.writeLocked(listwatch.Modified, obj) }

// Delete is Source.Delete within a batch.
func (b Batch[T]) Delete(namespace, name string) (T, error) {
	return b.s.deleteLocked(namespace, name)
}

// commitLocked stamps c with the next version, logs it, compacts to the
// window and fans it out.
func (s *Source[T]) commitLocked(c change[T]) {
	s.rv++
	c.rv = s.rv
	c.obj.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	s.log = append(s.log, c)
	if w := s.opts.CompactionWindow; w > 0 && s.rv-s.base > w {
		s.compactToLocked(s.rv - w)
	}
	for w := range s.watches {
		w.deliverLocked(c)
	}
}

// Compact forgets all history: every version older than the current one
// answers ErrExpired from now on (lists at an exact version, continue
// tokens, watches). Open watches are not affected.
func (s *Source[T]) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Compactions++
	s.compactToLocked(s.rv)
}

// compactToLocked forgets the changes at or before base. It costs the
// number of changes dropped, never the number kept: the log's start moves
// forward over its backing array (the dropped entries are cleared so they
// pin no object), and append copies the kept entries into a new array only
// when the old one is full. Each write therefore costs O(1) amortized,
// whatever the window (BenchmarkFakeWriteWithCompactionWindow).
func (s *Source[T]) compactToLocked(base int64) {
	if base <= s.base {
		return
	}
	drop := base - s.base
	clear(s.log[:drop])
	s.log = s.log[drop:]
	if len(s.log) == 0 {
		s.log = nil // all forgotten (Compact): release the array
	}
	s.base = base
}

// Bookmark sends a bookmark at the current version to every open watch
// that asked for bookmarks.
func (s *Source[T]) Bookmark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		if w.opts.AllowBookmarks {
			w.pushLocked(item[T]{ev: s.bookmarkLocked(false)})
		}
	}
}

func (s *Source[T]) bookmarkLocked(end bool) listwatch.Event[T] {
	rv := strconv.FormatInt(s.rv, 10)
	var obj T
	if t := reflect.TypeFor[T](); t.Kind() == reflect.Pointer {
		obj = reflect.New(t.Elem()).Interface().(T)
		obj.SetResourceVersion(rv)
	}
	return listwatch.Event[T]{Type: listwatch.Bookmark, Object: obj, ResourceVersion: rv, InitialEventsEnd: end}
}

// ResourceVersion returns the current resource version.
func (s *Source[T]) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.FormatInt(s.rv, 10)
}

// Get returns a copy of the object stored under namespace/name.
func (s *Source[T]) Get(namespace, name string) (T, bool) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	if !ok {
		var zero T
		return zero, false
	}
	return s.deepCopy(obj), true
}

// Objects returns a copy of the truth, sorted by key.
func (s *Source[T]) Objects() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sortedLocked(s.objects, "", nil)
}

// sortedLocked copies the objects of m with keys after "after" that match
// opts' filter (when opts is not nil), in key order.
func (s *Source[T]) sortedLocked(m map[string]T, after string, opts *listwatch.Options) []T {
	keys := make([]string, 0, len(m))
	for k, obj := range m {
		if k > after && (opts == nil || s.matches(obj, *opts)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = s.deepCopy(m[k])
	}
	return out
}

func (s *Source[T]) matches(obj T, opts listwatch.Options) bool {
	return s.opts.Filter == nil || s.opts.Filter(obj, opts)
}

// Stats returns the counters.
func (s *Source[T]) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// ListCalls returns the options of every List call so far, in order.
func (s *Source[T]) ListCalls() []listwatch.Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]listwatch.Options(nil), s.calls.lists...)
}

// WatchCalls returns the options of every Watch call so far, in order.
func (s *Source[T]) WatchCalls() []listwatch.Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]listwatch.Options(nil), s.calls.watches...)
}

// OpenWatches counts the watches not yet ended.
func (s *Source[T]) OpenWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watches)
}
