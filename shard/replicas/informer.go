package replicas

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

// Errors of Informer.
var (
	// ErrNotRunning: the Informer's Run has returned. Before Run starts,
	// SetRanges waits for it instead, so that starting Run on a goroutine
	// and then calling SetRanges is not a race; if its context ends first,
	// its error wraps the context's and says that Run has not started.
	ErrNotRunning = errors.New("replicas: informer not running")
	// ErrOverlap: SetRanges was given ranges that overlap.
	ErrOverlap = errors.New("replicas: overlapping ranges")
)

// InformerOptions configure NewInformer. NewSource is required.
type InformerOptions[T shard.Member] struct {
	// Name names the informer; each range's shared informer is named
	// after it and the range.
	Name string
	// Field is what the ranges hash. Default shard.UID.
	Field shard.Field
	// NewSource returns a source of the objects of one shard. For a
	// kube-apiserver it is kube.Source with
	// SourceOptions.Selection.Shard set to set, which the server filters
	// when it can; any other source can be wrapped with shard.Filter.
	NewSource func(set shard.Set) (listwatch.ListerWatcher[T], error)
	// Informer configures each range's shared informer: transform, indexers,
	// resync, error handler, clock, metrics, list-and-watch settings. Its
	// Name and Source are set by the Informer.
	Informer informer.Options[T]
}

// Informer caches the objects of a set of hash ranges that changes while
// it runs: each range has a shared informer of its own (its own list and
// watch, with the shard selector of that range alone), so acquiring a
// range lists only that range, and releasing one drops its cache and
// nothing else. No change of ranges relists the ranges that stay.
//
// Reads (Cache, Owns) see a range once its informer has
// synced, from its first OnAcquire on, until its release starts. A range
// counts as owned (SetRanges returns, a Group claims it) once every
// handler has also returned from its OnAcquire calls. Handlers learn of
// ranges gained and lost as OnAcquire and OnRelease, never as adds or
// deletes.
//
// The price of one watch per range: with a server that does not filter by
// shard (feature gate off), every range's list and watch carries every
// object, so a replica owning k ranges receives and decodes every object
// k times; it still caches only its own. Use few ranges then.
//
// An Informer is safe for concurrent use. Create it with NewInformer; run
// it with Run (a Group runs the informers added to it).
type Informer[T shard.Member] struct {
	// Set by NewInformer, then read-only.
	name      string
	field     shard.Field
	newSource func(shard.Set) (listwatch.ListerWatcher[T], error)
	infOpts   informer.Options[T]

	// reqs carries the requests of acquire, release and AddHandler to Run,
	// which owns every range's goroutines. Never closed.
	reqs chan request[T]
	// runDone is closed when Run's loop has ended: requests are refused
	// from then on.
	runDone chan struct{}
	// visible is the snapshot reads use: the ranges synced and not
	// released, in order.
	visible atomic.Pointer[[]*part[T]]
	// fence, when set (by a Group), vetoes Owns while the replica's claims
	// may have lapsed; notify, when set, is called after each change of the
	// owned ranges (it must not block).
	fence  atomic.Pointer[func() bool]
	notify atomic.Pointer[func()]

	// mu guards the fields below.
	mu       sync.Mutex
	running  bool
	stopped  bool
	handlers []*serial[T]
	// changed is closed, and replaced, whenever a range becomes owned or
	// is released: a broadcast to whoever waits for ranges (changes).
	changed chan struct{}
	// parts holds every range being synced or owned, by range. Only Run's
	// goroutine adds and removes entries.
	parts map[shard.Range]*part[T]
}

// part is one range: its shared informer and where it stands.
type part[T shard.Member] struct {
	r      shard.Range
	inf    *informer.Shared[T]
	cancel context.CancelFunc
	// done is closed when inf.Run has returned.
	done chan struct{}
	// readable is set once inf has synced (at the latest when a handler
	// is first handed one of its objects): reads see the range from then.
	readable atomic.Bool
	// owned (every handler has returned from the range's acquisitions),
	// released and regs (each handler's registration in inf) are guarded
	// by Informer.mu.
	owned, released bool
	regs            map[*serial[T]]*informer.Registration
}

type requestKind int

const (
	reqAcquire requestKind = iota
	reqRelease
	reqAddHandler
	reqRemoveHandler
)

type request[T shard.Member] struct {
	kind  requestKind
	r     shard.Range
	h     *serial[T]
	reg   *Registration // of reqRemoveHandler
	reply chan error    // buffered: Run never blocks on it
}

// NewInformer builds an Informer with no range. It does nothing until Run.
func NewInformer[T shard.Member](opts InformerOptions[T]) (*Informer[T], error) {
	if opts.NewSource == nil {
		return nil, errors.New("replicas: NewInformer: nil NewSource")
	}
	if opts.Field == "" {
		opts.Field = shard.UID
	}
	if _, err := shard.NewSet(opts.Field, shard.Range{}); err != nil {
		return nil, fmt.Errorf("replicas: NewInformer: %w", err)
	}
	name := opts.Name
	if name == "" {
		var zero T
		name = fmt.Sprintf("%T", zero)
	}
	i := &Informer[T]{
		name: name, field: opts.Field, newSource: opts.NewSource, infOpts: opts.Informer,
		reqs:    make(chan request[T]),
		runDone: make(chan struct{}),
		changed: make(chan struct{}),
		parts:   map[shard.Range]*part[T]{},
	}
	i.visible.Store(&[]*part[T]{})
	return i, nil
}

// Name returns the informer's name.
func (i *Informer[T]) Name() string { return i.name }

// Field returns what the informer's ranges hash.
func (i *Informer[T]) Field() shard.Field { return i.field }

// AddHandler registers h. Added before Run, it is handed the objects of
// every range as they are acquired; added later, it first gets OnAcquire
// for every object of the ranges owned or being synced then. A handler
// must not call SetRanges (or anything that waits for a range change):
// releases wait for handlers. The Registration says when h has been handed
// the ranges held when it was added (see Registration.HasSynced).
func (i *Informer[T]) AddHandler(h Handler[T]) (*Registration, error) {
	s := newSerial(h)
	i.mu.Lock()
	if i.stopped {
		i.mu.Unlock()
		return nil, ErrNotRunning
	}
	if !i.running {
		i.handlers = append(i.handlers, s)
		close(s.reg.synced)
		i.mu.Unlock()
		return s.reg, nil
	}
	i.mu.Unlock()
	if err := i.do(context.Background(), request[T]{kind: reqAddHandler, h: s}); err != nil {
		return nil, err
	}
	return s.reg, nil
}

// RemoveHandler stops the calls to the handler of reg, in every range,
// and returns once none is in progress; the handler no longer holds up
// the ranges being synced. It fails with an error wrapping
// informer.ErrUnknownRegistration if reg is not one of this Informer's
// handlers (or was removed already).
func (i *Informer[T]) RemoveHandler(reg *Registration) error {
	i.mu.Lock()
	k, err := i.handlerLocked(reg)
	if err != nil {
		i.mu.Unlock()
		return err
	}
	s := i.handlers[k]
	if !i.running || i.stopped { // no range to remove it from
		i.handlers = slices.Delete(i.handlers, k, k+1)
		i.mu.Unlock()
		s.remove()
		return nil
	}
	i.mu.Unlock()
	err = i.do(context.Background(), request[T]{kind: reqRemoveHandler, reg: reg})
	if errors.Is(err, ErrNotRunning) { // stopped meanwhile: its ranges are gone
		i.mu.Lock()
		i.handlers = slices.DeleteFunc(i.handlers, func(x *serial[T]) bool { return x == s })
		i.mu.Unlock()
		err = nil
	}
	s.remove()
	return err
}

// do hands req to Run and waits for its answer, or for ctx. Before Run
// starts, it waits for it (an error wrapping ctx's says so if ctx ends
// first); after Run has returned, it fails with ErrNotRunning.
func (i *Informer[T]) do(ctx context.Context, req request[T]) error {
	req.reply = make(chan error, 1)
	select {
	case i.reqs <- req:
	case <-i.runDone:
		return ErrNotRunning
	case <-ctx.Done():
		i.mu.Lock()
		started := i.running
		i.mu.Unlock()
		if !started {
			return fmt.Errorf("replicas: %s: Run has not started: %w", i.name, ctx.Err())
		}
		return ctx.Err()
	}
	select {
	case err := <-req.reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run starts and stops the ranges' informers as asked, until ctx is done;
// it then stops them all (handlers get no OnRelease: the replica is
// stopping, not handing over) and returns once every goroutine it started
// has exited. It may be called once.
func (i *Informer[T]) Run(ctx context.Context) error {
	i.mu.Lock()
	if i.running || i.stopped {
		i.mu.Unlock()
		return informer.ErrAlreadyStarted
	}
	i.running = true
	i.mu.Unlock()

	var wg sync.WaitGroup
	defer func() {
		close(i.runDone)
		i.mu.Lock()
		i.stopped = true
		parts := make([]*part[T], 0, len(i.parts))
		for _, p := range i.parts {
			p.released = true
			parts = append(parts, p)
		}
		i.parts = map[shard.Range]*part[T]{}
		i.publishLocked()
		i.mu.Unlock()
		for _, p := range parts {
			p.cancel()
		}
		wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case req := <-i.reqs:
			switch req.kind {
			case reqAcquire:
				req.reply <- i.startRange(ctx, &wg, req.r)
			case reqRelease:
				i.stopRange(req.r)
				req.reply <- nil
			case reqAddHandler:
				req.reply <- i.addHandlerRunning(&wg, req.h)
			case reqRemoveHandler:
				req.reply <- i.removeHandlerRunning(req.reg)
			}
		}
	}
}

// startRange starts the informer of r, unless r is being synced or owned
// already, on goroutines wg counts.
func (i *Informer[T]) startRange(ctx context.Context, wg *sync.WaitGroup, r shard.Range) error {
	i.mu.Lock()
	_, exists := i.parts[r]
	handlers := slices.Clone(i.handlers)
	i.mu.Unlock()
	if exists {
		return nil
	}
	set, err := shard.NewSet(i.field, r)
	if err != nil {
		return fmt.Errorf("replicas: %s: range %s: %w", i.name, r, err)
	}
	src, err := i.newSource(set)
	if err != nil {
		return fmt.Errorf("replicas: %s: source of range %s: %w", i.name, r, err)
	}
	opts := i.infOpts
	opts.Name = i.name + " shard=" + set.String()
	opts.Source = src
	inf, err := informer.NewShared(opts)
	if err != nil {
		return fmt.Errorf("replicas: %s: range %s: %w", i.name, r, err)
	}
	pctx, cancel := context.WithCancel(ctx)
	p := &part[T]{r: r, inf: inf, cancel: cancel, done: make(chan struct{}), regs: map[*serial[T]]*informer.Registration{}}
	for _, h := range handlers {
		reg, err := inf.AddHandler(rangeHandler[T]{s: h, p: p, i: i}, informer.HandlerOptions{})
		if err != nil {
			cancel()
			return fmt.Errorf("replicas: %s: range %s: %w", i.name, r, err)
		}
		p.regs[h] = reg
	}
	regs := maps.Clone(p.regs)
	i.mu.Lock()
	i.parts[r] = p
	i.mu.Unlock()
	wg.Go(func() {
		defer close(p.done)
		if err := inf.Run(pctx); err != nil {
			i.report(fmt.Errorf("replicas: %s: range %s: %w", i.name, r, err))
		}
	})
	wg.Go(func() { i.awaitSync(pctx, p, regs) })
	return nil
}

// awaitSync makes p readable once its informer has synced, and marks it
// owned once every handler (of regs, those it started with) has returned
// from its acquisitions or been removed, unless it is released first.
func (i *Informer[T]) awaitSync(ctx context.Context, p *part[T], regs map[*serial[T]]*informer.Registration) {
	if !p.inf.WaitForCacheSync(ctx) {
		return
	}
	i.markReadable(p)
	for h, reg := range regs {
		select {
		case <-reg.Synced():
		case <-h.gone:
		case <-ctx.Done():
			return
		}
	}
	i.mu.Lock()
	if p.released {
		i.mu.Unlock()
		return
	}
	p.owned = true
	i.publishLocked()
	i.mu.Unlock()
}

// stopRange stops the informer of r and, if r was owned, hands each
// handler OnRelease for each of its cached objects.
func (i *Informer[T]) stopRange(r shard.Range) {
	i.mu.Lock()
	p, ok := i.parts[r]
	if !ok {
		i.mu.Unlock()
		return
	}
	delete(i.parts, r)
	wasOwned := p.owned
	p.released, p.owned = true, false
	i.publishLocked()
	handlers := slices.Clone(i.handlers)
	i.mu.Unlock()
	p.cancel()
	<-p.done
	if !wasOwned {
		return // never owned: its objects were never all handed out as owned
	}
	for _, obj := range p.inf.Cache().List() {
		for _, h := range handlers {
			h.call(func(h Handler[T]) { h.OnRelease(obj) })
		}
	}
}

// markReadable lets reads see p, which has synced.
func (i *Informer[T]) markReadable(p *part[T]) {
	if !p.readable.CompareAndSwap(false, true) {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if !p.released {
		i.publishLocked()
	}
}

// addHandlerRunning adds h to every range being synced or owned, and
// closes its registration's synced channel once h has been handed each of
// them (or the range is released), from a goroutine wg counts (it ends at
// the latest when Run stops every range).
func (i *Informer[T]) addHandlerRunning(wg *sync.WaitGroup, h *serial[T]) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	type wait struct{ synced, released <-chan struct{} }
	var waits []wait
	for _, p := range i.parts {
		r, err := p.inf.AddHandler(rangeHandler[T]{s: h, p: p, i: i}, informer.HandlerOptions{})
		if err != nil {
			for _, p := range i.parts { // undo the ranges added to
				if r, ok := p.regs[h]; ok {
					delete(p.regs, h)
					_ = p.inf.RemoveHandler(r)
				}
			}
			return fmt.Errorf("replicas: %s: range %s: %w", i.name, p.r, err)
		}
		p.regs[h] = r
		waits = append(waits, wait{r.Synced(), p.done})
	}
	i.handlers = append(i.handlers, h)
	if len(waits) == 0 {
		close(h.reg.synced)
		return nil
	}
	wg.Go(func() {
		for _, w := range waits {
			select {
			case <-w.synced:
			case <-w.released:
			case <-h.gone:
				return
			}
		}
		close(h.reg.synced)
	})
	return nil
}

// handlerLocked returns the index of reg's handler in i.handlers, or an
// error wrapping informer.ErrUnknownRegistration. i.mu is held.
func (i *Informer[T]) handlerLocked(reg *Registration) (int, error) {
	k := slices.IndexFunc(i.handlers, func(s *serial[T]) bool { return s.reg == reg })
	if k < 0 {
		return -1, fmt.Errorf("replicas: %s: RemoveHandler: %w", i.name, informer.ErrUnknownRegistration)
	}
	return k, nil
}

// removeHandlerRunning takes the handler of reg out of every range.
func (i *Informer[T]) removeHandlerRunning(reg *Registration) error {
	i.mu.Lock()
	k, err := i.handlerLocked(reg)
	if err != nil {
		i.mu.Unlock()
		return err
	}
	h := i.handlers[k]
	i.handlers = slices.Delete(i.handlers, k, k+1)
	var errs []error
	for _, p := range i.parts {
		if r, ok := p.regs[h]; ok {
			delete(p.regs, h)
			if err := p.inf.RemoveHandler(r); err != nil {
				errs = append(errs, fmt.Errorf("replicas: %s: range %s: %w", i.name, p.r, err))
			}
		}
	}
	i.mu.Unlock()
	return errors.Join(errs...)
}

// publishLocked refreshes the snapshot of readable ranges and tells
// whoever waits for a change.
func (i *Informer[T]) publishLocked() {
	visible := make([]*part[T], 0, len(i.parts))
	for _, p := range i.parts {
		if p.readable.Load() && !p.released {
			visible = append(visible, p)
		}
	}
	slices.SortFunc(visible, func(a, b *part[T]) int { return cmp.Compare(a.r.Start, b.r.Start) })
	i.visible.Store(&visible)
	close(i.changed)
	i.changed = make(chan struct{})
	if n := i.notify.Load(); n != nil {
		(*n)()
	}
}

// attach is how a Group hands the informer its fence and its wake-up.
func (i *Informer[T]) attach(fence func() bool, notify func()) {
	i.fence.Store(&fence)
	i.notify.Store(&notify)
}

// changes returns a channel closed at the next change of the owned
// ranges.
func (i *Informer[T]) changes() <-chan struct{} {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.changed
}

func (i *Informer[T]) report(err error) {
	if i.infOpts.ErrorHandler != nil {
		i.infOpts.ErrorHandler(err)
	}
}

// acquire starts syncing r; it is owned once synced (see isOwned).
func (i *Informer[T]) acquire(ctx context.Context, r shard.Range) error {
	return i.do(ctx, request[T]{kind: reqAcquire, r: r})
}

// release stops caching r, telling handlers if it was owned, and returns
// once they have been told.
func (i *Informer[T]) release(ctx context.Context, r shard.Range) error {
	return i.do(ctx, request[T]{kind: reqRelease, r: r})
}

// isOwned reports whether r is owned: synced, every handler has returned
// from its acquisitions, not released.
func (i *Informer[T]) isOwned(r shard.Range) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	p, ok := i.parts[r]
	return ok && p.owned
}

// holds reports whether r is being synced or owned.
func (i *Informer[T]) holds(r shard.Range) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	_, ok := i.parts[r]
	return ok
}

// SetRanges makes the informer cache exactly ranges, gainer first: it
// starts the ranges it lacks, waits until every one of them is owned
// (synced, and every handler has returned from its OnAcquire calls), and
// only then releases the ranges not in the list. Ranges that stay are not touched. It returns
// ctx's error if ctx ends first (the ranges started go on syncing), and
// ErrOverlap if two of ranges overlap. Called before Run, it waits for Run
// to start (its error then says "Run has not started" if ctx ends first);
// after Run has returned, it fails with ErrNotRunning. Ranges are compared as given: a
// range cut differently from one owned is a new range, and while both are
// owned reads may see their common objects twice.
//
// A Group calls the same steps range by range; SetRanges is for a
// replica that computes its own ranges.
func (i *Informer[T]) SetRanges(ctx context.Context, ranges []shard.Range) error {
	rs := slices.Clone(ranges)
	slices.SortFunc(rs, func(a, b shard.Range) int { return cmp.Compare(a.Start, b.Start) })
	for k := 1; k < len(rs); k++ {
		if rs[k-1].End == 0 || rs[k].Start < rs[k-1].End {
			return fmt.Errorf("%w: %s and %s", ErrOverlap, rs[k-1], rs[k])
		}
	}
	for _, r := range rs {
		if err := i.acquire(ctx, r); err != nil {
			return err
		}
	}
	for {
		changed := i.changes()
		all := true
		for _, r := range rs {
			all = all && i.isOwned(r)
		}
		if all {
			break
		}
		select {
		case <-changed:
		case <-i.runDone:
			return ErrNotRunning
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	i.mu.Lock()
	var drop []shard.Range
	for r := range i.parts {
		if !slices.Contains(rs, r) {
			drop = append(drop, r)
		}
	}
	i.mu.Unlock()
	for _, r := range drop {
		if err := i.release(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// Ranges returns the ranges reads see (synced, not released), in order.
func (i *Informer[T]) Ranges() []shard.Range {
	owned := *i.visible.Load()
	out := make([]shard.Range, len(owned))
	for k, p := range owned {
		out[k] = p.r
	}
	return out
}

// Owns reports whether obj is in a range this replica holds now, synced
// and not released: the per-object check a controller that cannot
// tolerate the handoff window (two replicas owning a range for a moment)
// calls before acting. It is true from the range's first OnAcquire (so a
// worker handed the key by OnAcquire finds it owned) and false from the
// start of its release. In a Group it is also false once the replica's
// own Lease may have lapsed (it could not renew it for a Lease duration).
func (i *Informer[T]) Owns(obj shard.Object) bool {
	if f := i.fence.Load(); f != nil && !(*f)() {
		return false
	}
	h := shard.HashOf(obj, i.field)
	for _, p := range *i.visible.Load() {
		if p.r.Contains(h) {
			return true
		}
	}
	return false
}

// Cache reads the objects of the owned ranges as one cache: each read
// covers the ranges readable at that moment (see Informer). Keys are
// unique across ranges, so a key is found in at most one of them; index
// lookups add up the ranges' answers. The objects are shared and must not
// be mutated.
func (i *Informer[T]) Cache() cache.Reader[T] {
	return cache.JoinReaders(func() []cache.Reader[T] {
		owned := *i.visible.Load()
		out := make([]cache.Reader[T], len(owned))
		for k, p := range owned {
			out[k] = p.inf.Cache()
		}
		return out
	})
}

// objects is the number of objects in the owned ranges (a Group reports it).
func (i *Informer[T]) objects() int { return i.Cache().Len() }
