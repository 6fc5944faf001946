package clientgo

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// clientGoSource serves one kinformer fake source to client-go's reflector,
// so that client-go's informer and the adapter read the same truth, with the
// same faults. Errors are translated as a kube-apiserver would answer them.
type clientGoSource struct {
	src *fake.Source[*corev1.ConfigMap]
}

func toOptions(o metav1.ListOptions) listwatch.Options {
	opts := listwatch.Options{
		ResourceVersion:      o.ResourceVersion,
		ResourceVersionMatch: listwatch.ResourceVersionMatch(o.ResourceVersionMatch),
		LabelSelector:        o.LabelSelector,
		FieldSelector:        o.FieldSelector,
		Limit:                o.Limit,
		Continue:             o.Continue,
		AllowBookmarks:       o.AllowWatchBookmarks,
	}
	if o.TimeoutSeconds != nil {
		opts.TimeoutSeconds = *o.TimeoutSeconds
	}
	if o.SendInitialEvents != nil {
		opts.SendInitialEvents = *o.SendInitialEvents
	}
	return opts
}

// apiError maps a fake's error onto what client-go would get from a server.
func apiError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, listwatch.ErrExpired):
		return apierrors.NewResourceExpired(err.Error())
	case errors.Is(err, listwatch.ErrTooLargeResourceVersion):
		return tooLargeResourceVersion(err.Error())
	case errors.Is(err, listwatch.ErrUnavailable):
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	case errors.Is(err, listwatch.ErrStreamingListUnsupported):
		return apierrors.NewBadRequest(err.Error())
	}
	return err
}

func (s clientGoSource) List(o metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), o)
}

func (s clientGoSource) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), o)
}

func (s clientGoSource) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	page, err := s.src.List(ctx, toOptions(o))
	if err != nil {
		return nil, apiError(err)
	}
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: page.ResourceVersion, Continue: page.Continue}}
	for _, cm := range page.Items {
		list.Items = append(list.Items, *cm)
	}
	return list, nil
}

func (s clientGoSource) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := s.src.Watch(ctx, toOptions(o))
	if err != nil {
		return nil, apiError(err)
	}
	cw := &clientGoWatch{w: w, ch: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go cw.pump()
	return cw, nil
}

// clientGoWatch pumps a kinformer watch into a client-go watch.Interface.
// pump is its one goroutine: it exits when the stream ends or Stop is called,
// and closes ch (done) on its way out.
type clientGoWatch struct {
	w    listwatch.Watch[*corev1.ConfigMap]
	ch   chan watch.Event
	stop chan struct{} // closed by Stop
	once sync.Once
	done chan struct{} // closed when pump has exited
}

func (c *clientGoWatch) ResultChan() <-chan watch.Event { return c.ch }

// Stop ends the stream and waits for pump to exit.
func (c *clientGoWatch) Stop() {
	c.once.Do(func() {
		close(c.stop)
		_ = c.w.Close()
	})
	<-c.done
}

func (c *clientGoWatch) pump() {
	defer close(c.done)
	defer close(c.ch)
	for {
		ev, err := c.w.Next()
		var out watch.Event
		switch {
		case errors.Is(err, io.EOF):
			return
		case errors.Is(err, listwatch.ErrWrongType):
			continue
		case err != nil:
			out = watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}
		default:
			out = convertEvent(ev)
		}
		select {
		case c.ch <- out:
		case <-c.stop:
			return
		}
		if out.Type == watch.Error {
			return
		}
	}
}

func convertEvent(ev listwatch.Event[*corev1.ConfigMap]) watch.Event {
	switch ev.Type {
	case listwatch.Added:
		return watch.Event{Type: watch.Added, Object: ev.Object}
	case listwatch.Modified:
		return watch.Event{Type: watch.Modified, Object: ev.Object}
	case listwatch.Deleted:
		return watch.Event{Type: watch.Deleted, Object: ev.Object}
	case listwatch.Bookmark:
		bm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: ev.ResourceVersion}}
		if ev.InitialEventsEnd {
			bm.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
		}
		return watch.Event{Type: watch.Bookmark, Object: bm}
	}
	status := apierrors.NewInternalError(ev.Err).ErrStatus
	var se apierrors.APIStatus
	if errors.As(apiError(ev.Err), &se) {
		status = se.Status()
	}
	return watch.Event{Type: watch.Error, Object: &status}
}
