package scenario

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	cgcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/listwatch"
)

// podSource is one in-memory workload for an informer: a list of pods,
// then a stream of watch events. It is read by either side's source
// adapter, so both sides get the same objects in the same order, in the
// form each side's real source produces (client-go: a *PodList whose items
// its reflector copies out; kinformer: a page of pointers, here pointing
// at the very items of that list).
//
// Both adapters answer with a plain, unpaginated list: client-go's because
// it says it does not support streaming lists (the opt-out client-go
// itself offers for such sources), kinformer's because its watch answers a
// streaming request with ErrStreamingListUnsupported.
type podSource struct {
	// list returns the list and pointers to its items (see podList). It
	// is called on each List, so a source may build fresh objects every
	// time rather than keep them.
	list func() (*corev1.PodList, []*corev1.Pod)
	// rv is the list's resource version; watch event i carries rv+1+i.
	rv int64
	// events counts the watch events; event(i) returns the object of
	// event i (a Modified, or a Deleted when deleted(i)), at version
	// rv+1+i. It may build the object on the fly.
	events  int
	event   func(i int) *corev1.Pod
	deleted func(i int) bool
	// start, when not nil, holds back every watch event until it is
	// closed, so that a scenario can time the watch apart from the list.
	start <-chan struct{}
	// rate, when positive, paces the events: event i is not delivered
	// before i/rate seconds after the first.
	rate int
}

// pacer delays a stream of events to a source's rate.
type pacer struct {
	rate  int
	first time.Time
}

// wait blocks until event i is due (checking every 256 events), or stop
// or ctxDone is closed.
func (p *pacer) wait(i int, stop, ctxDone <-chan struct{}) {
	if p.rate <= 0 || i%256 != 0 {
		return
	}
	if p.first.IsZero() {
		p.first = time.Now()
		return
	}
	d := time.Until(p.first.Add(time.Duration(int64(i) * int64(time.Second) / int64(p.rate))))
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
	case <-ctxDone:
	}
}

// firstEvent returns the index of the first event after version rv.
func (s *podSource) firstEvent(rv string) (int, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	v, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad resource version %q: %w", rv, err)
	}
	return int(max(v-s.rv, 0)), nil
}

func (s *podSource) eventType(i int) watch.EventType {
	if s.deleted != nil && s.deleted(i) {
		return watch.Deleted
	}
	return watch.Modified
}

// ---- kinformer side ----

// oursSource adapts a podSource to kinformer's ListerWatcher.
type oursSource struct{ src *podSource }

func (o oursSource) List(context.Context, listwatch.Options) (listwatch.Page[*corev1.Pod], error) {
	list, items := o.src.list()
	return listwatch.Page[*corev1.Pod]{Items: items, ResourceVersion: list.ResourceVersion}, nil
}

func (o oursSource) Watch(ctx context.Context, opts listwatch.Options) (listwatch.Watch[*corev1.Pod], error) {
	if opts.SendInitialEvents {
		return nil, listwatch.ErrStreamingListUnsupported
	}
	next, err := o.src.firstEvent(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	return &oursWatch{src: o.src, ctx: ctx, next: next, closed: make(chan struct{}), pace: pacer{rate: o.src.rate}}, nil
}

// oursWatch yields the source's events from next on, then blocks until it
// is closed or its context ends.
type oursWatch struct {
	src     *podSource
	ctx     context.Context // the Watch call's; ends the stream
	next    int
	started bool
	pace    pacer
	// closed is closed by Close (once).
	closed    chan struct{}
	closeOnce sync.Once
}

func (w *oursWatch) Next() (listwatch.Event[*corev1.Pod], error) {
	if !w.started && w.src.start != nil {
		select {
		case <-w.src.start:
		case <-w.closed:
			return listwatch.Event[*corev1.Pod]{}, io.EOF
		case <-w.ctx.Done():
			return listwatch.Event[*corev1.Pod]{}, io.EOF
		}
	}
	w.started = true
	if w.next < w.src.events {
		i := w.next
		w.next++
		w.pace.wait(i, w.closed, w.ctx.Done())
		obj := w.src.event(i)
		typ := listwatch.Modified
		if w.src.eventType(i) == watch.Deleted {
			typ = listwatch.Deleted
		}
		return listwatch.Event[*corev1.Pod]{Type: typ, Object: obj, ResourceVersion: obj.ResourceVersion}, nil
	}
	select {
	case <-w.closed:
	case <-w.ctx.Done():
	}
	return listwatch.Event[*corev1.Pod]{}, io.EOF
}

func (w *oursWatch) Close() error {
	w.closeOnce.Do(func() { close(w.closed) })
	return nil
}

// ---- client-go side ----

// clientGoSource adapts a podSource to client-go's ListerWatcher.
type clientGoSource struct {
	*cgcache.ListWatch
}

// IsWatchListSemanticsUnSupported tells client-go's reflector to use a
// plain list, as kinformer's does with this source.
func (clientGoSource) IsWatchListSemanticsUnSupported() bool { return true }

func newClientGoSource(src *podSource) clientGoSource {
	return clientGoSource{&cgcache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			list, _ := src.list()
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			next, err := src.firstEvent(opts.ResourceVersion)
			if err != nil {
				return nil, err
			}
			w := &clientGoWatch{
				// Unbuffered, as client-go's StreamWatcher's.
				result: make(chan watch.Event),
				stop:   make(chan struct{}),
				done:   make(chan struct{}),
			}
			go w.feed(ctx, src, next)
			return w, nil
		},
	}}
}

// clientGoWatch is a watch.Interface fed by one goroutine from the source,
// the shape of client-go's StreamWatcher (which decodes on such a
// goroutine).
type clientGoWatch struct {
	// result carries the events; feed closes it on exit.
	result chan watch.Event
	// stop is closed by Stop (once); done is closed when feed has exited.
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func (w *clientGoWatch) feed(ctx context.Context, src *podSource, next int) {
	defer close(w.done)
	defer close(w.result)
	if src.start != nil {
		select {
		case <-src.start:
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
	pace := pacer{rate: src.rate}
	for i := next; i < src.events; i++ {
		pace.wait(i, w.stop, ctx.Done())
		ev := watch.Event{Type: src.eventType(i), Object: src.event(i)}
		select {
		case w.result <- ev:
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
	select {
	case <-w.stop:
	case <-ctx.Done():
	}
}

func (w *clientGoWatch) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}

func (w *clientGoWatch) ResultChan() <-chan watch.Event { return w.result }
