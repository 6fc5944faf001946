package clientgo

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// ErrReadOnly is matched by the error of every write to the Indexer that
// GetIndexer returns: the informer is its cache's only writer.
var ErrReadOnly = errors.New("the informer's cache is read-only")

// errorRouter splits the informer's errors the way client-go does: the list
// and watch failures client-go hands its watch error handler go to that
// handler, the ones it only logs are logged (klog, verbosity 4), and the rest
// go to the user's error handler or utilruntime.HandleError.
type errorRouter struct {
	name string
	// other receives the errors that are not list or watch failures; nil
	// means utilruntime.HandleError.
	other func(error)
	// watch is the informer's watch error handler, set before Run (nil:
	// client-go's DefaultWatchErrorHandler).
	watch *atomic.Pointer[toolscache.WatchErrorHandlerWithContext]

	// reflector is handed to watch error handlers, which expect one; it
	// names the informer and never runs. Made on first use.
	reflectorOnce sync.Once
	reflector     *toolscache.Reflector
}

func newErrorRouter(name string, other func(error)) *errorRouter {
	return &errorRouter{name: name, other: other}
}

// report is the kinformer informer's ErrorHandler.
func (r *errorRouter) report(err error) {
	var pe *listwatch.PhaseError
	// A list applied but for some objects (rejected by a transform, or that
	// could not be keyed) is not a failed list: the informer synced.
	if errors.As(err, &pe) && !errors.Is(err, cache.ErrSkipped) {
		switch {
		case pe.Phase == listwatch.PhaseList,
			pe.Phase == listwatch.PhaseWatchStart && !errors.Is(pe.Err, listwatch.ErrUnavailable):
			// What client-go's ListAndWatch returns to its watch error
			// handler: a failed list, a watch that could not start for a
			// reason other than a refused connection.
			r.reportWatch(clientGoError(pe.Err))
			return
		case pe.Phase == listwatch.PhaseWatchStart, pe.Phase == listwatch.PhaseWatchStream:
			// client-go backs off and watches again, or relists, without
			// telling the handler; it logs.
			klog.Background().V(4).Info("Watch closed", "reflector", r.name, "err", pe.Err)
			return
		}
	}
	if r.other != nil {
		r.other(err)
		return
	}
	utilruntime.HandleErrorWithContext(context.Background(), err, "Informer error", "informer", r.name)
}

func (r *errorRouter) reportWatch(err error) {
	// The handler is called with context.Background(): the informer keeps no
	// context of its own.
	ctx := context.Background()
	h := toolscache.WatchErrorHandlerWithContext(toolscache.DefaultWatchErrorHandler)
	if r.watch != nil {
		if p := r.watch.Load(); p != nil {
			h = *p
		}
	}
	h(ctx, r.placeholderReflector(), err)
}

func (r *errorRouter) placeholderReflector() *toolscache.Reflector {
	r.reflectorOnce.Do(func() {
		r.reflector = toolscache.NewReflectorWithOptions(noSource{}, &unstructured.Unstructured{}, toolscache.NewStore(toolscache.MetaNamespaceKeyFunc),
			toolscache.ReflectorOptions{Name: r.name, TypeDescription: r.name})
	})
	return r.reflector
}

// clientGoError returns err as client-go's reflector would have reported it:
// an expired resource version is a 410 StatusError (apierrors.IsResourceExpired,
// apierrors.IsGone), a clean end of a watch io.EOF. The kinformer error stays
// in the chain.
func clientGoError(err error) error {
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		return err
	case errors.Is(err, listwatch.ErrExpired):
		return &wrappedStatus{StatusError: apierrors.NewResourceExpired(err.Error()), cause: err}
	case errors.Is(err, listwatch.ErrTooLargeResourceVersion):
		return &wrappedStatus{StatusError: tooLargeResourceVersion(err.Error()), cause: err}
	case errors.Is(err, io.EOF):
		return io.EOF
	}
	return err
}

// wrappedStatus is an API status error that keeps the kinformer error it
// stands for reachable through errors.Is.
type wrappedStatus struct {
	*apierrors.StatusError
	cause error
}

func (w *wrappedStatus) Unwrap() error { return w.cause }

// noSource is the ListerWatcher of the placeholder reflector, never called.
type noSource struct{}

func (noSource) List(metav1.ListOptions) (runtime.Object, error) {
	return nil, errors.New("clientgo: not a source")
}

func (noSource) Watch(metav1.ListOptions) (watch.Interface, error) {
	return nil, errors.New("clientgo: not a source")
}

// tooLargeResourceVersion is the error a kube-apiserver answers for a resource
// version newer than it has seen: a timeout with the cause client-go looks for.
func tooLargeResourceVersion(msg string) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(msg, 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}
