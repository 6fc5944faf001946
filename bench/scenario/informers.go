package scenario

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	cgcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
)

// The pod informer of either side, behind one small interface so that a
// scenario's workload is written once. Each side is built as a controller
// would build it: a shared informer with the namespace index (what
// client-go's informer factory gives a pod informer), default options, and
// handlers that receive typed pods (client-go's by type assertion, as its
// users write them).

// podHandler is a handler written once for both sides. Nil funcs are
// skipped.
type podHandler struct {
	add    func(p *corev1.Pod)
	update func(old, new *corev1.Pod)
	delete func(p *corev1.Pod)
}

type podInformer interface {
	// addHandler registers h; call it before run.
	addHandler(h podHandler) error
	// run runs the informer until ctx is done and every goroutine it
	// started has exited.
	run(ctx context.Context) error
	// cached returns every cached pod.
	cached() []*corev1.Pod
	// get reads one pod through the side's lister.
	get(namespace, name string) (*corev1.Pod, error)
}

func newPodInformer(side Side, src *podSource) (podInformer, error) {
	switch side {
	case Ours:
		return newOursInformer(src)
	case ClientGo:
		return newClientGoInformer(src), nil
	}
	return nil, fmt.Errorf("unknown side %q", side)
}

// startInformer runs inf on a goroutine; stop cancels it and waits for it
// to return, reporting its error.
func startInformer(ctx context.Context, inf podInformer) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- inf.run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// ---- kinformer ----

type oursInformer struct {
	inf    *informer.Shared[*corev1.Pod]
	lister informer.Lister[*corev1.Pod]
	// mu guards errs, the errors the informer reported.
	mu   sync.Mutex
	errs []error
}

func newOursInformer(src *podSource) (*oursInformer, error) {
	o := &oursInformer{}
	inf, err := informer.NewShared(informer.Options[*corev1.Pod]{
		Source:   oursSource{src},
		Indexers: cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod]},
		ErrorHandler: func(err error) {
			if errors.Is(err, listwatch.ErrStreamingListUnsupported) {
				return // the source's answer to a streaming list; expected
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			o.errs = append(o.errs, err)
		},
	})
	if err != nil {
		return nil, err
	}
	o.inf = inf
	o.lister = informer.NewLister(inf.Cache())
	return o, nil
}

func (o *oursInformer) addHandler(h podHandler) error {
	_, err := o.inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) {
			if h.add != nil {
				h.add(p)
			}
		},
		UpdateFunc: h.update,
		DeleteFunc: func(p *corev1.Pod, _ bool) {
			if h.delete != nil {
				h.delete(p)
			}
		},
	}, informer.HandlerOptions{})
	return err
}

func (o *oursInformer) run(ctx context.Context) error {
	err := o.inf.Run(ctx)
	o.mu.Lock()
	defer o.mu.Unlock()
	return errors.Join(append([]error{err}, o.errs...)...)
}

func (o *oursInformer) cached() []*corev1.Pod { return o.inf.Cache().List() }

func (o *oursInformer) get(namespace, name string) (*corev1.Pod, error) {
	return o.lister.Namespace(namespace).Get(name)
}

// ---- client-go ----

type clientGoInformer struct {
	inf    cgcache.SharedIndexInformer
	lister corelisters.PodLister
}

func newClientGoInformer(src *podSource) *clientGoInformer {
	inf := cgcache.NewSharedIndexInformer(newClientGoSource(src), &corev1.Pod{}, 0,
		cgcache.Indexers{cgcache.NamespaceIndex: cgcache.MetaNamespaceIndexFunc})
	return &clientGoInformer{inf: inf, lister: corelisters.NewPodLister(inf.GetIndexer())}
}

func (c *clientGoInformer) addHandler(h podHandler) error {
	_, err := c.inf.AddEventHandler(cgcache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if h.add != nil {
				h.add(obj.(*corev1.Pod))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if h.update != nil {
				h.update(oldObj.(*corev1.Pod), newObj.(*corev1.Pod))
			}
		},
		DeleteFunc: func(obj any) {
			if h.delete == nil {
				return
			}
			if t, ok := obj.(cgcache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			h.delete(obj.(*corev1.Pod))
		},
	})
	return err
}

func (c *clientGoInformer) run(ctx context.Context) error {
	c.inf.RunWithContext(ctx)
	return nil
}

func (c *clientGoInformer) cached() []*corev1.Pod {
	objs := c.inf.GetIndexer().List()
	pods := make([]*corev1.Pod, len(objs))
	for i, o := range objs {
		pods[i] = o.(*corev1.Pod)
	}
	return pods
}

func (c *clientGoInformer) get(namespace, name string) (*corev1.Pod, error) {
	return c.lister.Pods(namespace).Get(name)
}
