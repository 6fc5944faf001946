package cache

// The shim: what shared_informer_test.go (client-go v0.37.2's, copied
// unchanged) needs from client-go's package tools/cache, where it lives
// upstream.
//
//   - client-go's exported names it uses unqualified, as aliases;
//   - NewSharedInformer, which builds the informer of the side under test
//     (client-go's own, or this module's adapter, clientgo.New) and wraps it
//     in a *sharedIndexInformer, so that the test's type assertions hold;
//   - sharedIndexInformer's fields the test reads or sets (processor,
//     clock, resyncCheckPeriod, started under startedLock). They are filled
//     from the informer under test when the test reads them (inspect_test.go
//     says how, for each side), and a clock the test sets is handed to the
//     informer before it is used.

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname, for sharedProcessorRunHook

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/integrations/clientgo"
)

// client-go's names, as the test uses them.
type (
	SharedInformer                    = toolscache.SharedInformer
	SharedIndexInformer               = toolscache.SharedIndexInformer
	ResourceEventHandlerRegistration  = toolscache.ResourceEventHandlerRegistration
	ResourceEventHandler              = toolscache.ResourceEventHandler
	ResourceEventHandlerFuncs         = toolscache.ResourceEventHandlerFuncs
	ResourceEventHandlerDetailedFuncs = toolscache.ResourceEventHandlerDetailedFuncs
	HandlerOptions                    = toolscache.HandlerOptions
	IndexFunc                         = toolscache.IndexFunc
	Reflector                         = toolscache.Reflector
)

var (
	MetaNamespaceKeyFunc = toolscache.MetaNamespaceKeyFunc
	WaitForCacheSync     = toolscache.WaitForCacheSync
	WaitFor              = toolscache.WaitFor
	ShutDownEventHandler = toolscache.ShutDownEventHandler
)

// sharedProcessorRunHook is client-go's own (a test hook that delays the
// start of its handler delivery). kinformer has no such processor: Run
// starts the handlers' delivery before the first notification, so on
// kinformer's side the hook is not called.
//
//go:linkname sharedProcessorRunHook k8s.io/client-go/tools/cache.sharedProcessorRunHook
var sharedProcessorRunHook atomic.Pointer[func()]

// sideEnv selects the informer under test: sideClientGo or sideKinformer.
// Unset, TestMain runs only TestUpstreamSuite, which runs this package's
// tests once per side (see runner_test.go).
const sideEnv = "KINFORMER_UPSTREAM_SIDE"

const (
	sideClientGo  = "client-go"
	sideKinformer = "kinformer"
	// sideKinformerCrash is the adapter with Options.CrashOnHandlerPanic,
	// client-go's treatment of handler panics.
	sideKinformerCrash = "kinformer-crash-on-handler-panic"
)

func side() string { return os.Getenv(sideEnv) }

// NewSharedInformer stands for client-go's constructor of the same name: it
// builds the informer of the side under test over lw. On kinformer's side,
// the adapter is built lazily, at the first call, so that a clock the test
// sets first is given to it (kinformer takes its clock at construction).
func NewSharedInformer(lw toolscache.ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration) SharedInformer {
	if _, ok := exampleObject.(*corev1.Pod); !ok {
		panic(fmt.Sprintf("shim: only *v1.Pod informers are built, not %T", exampleObject))
	}
	s := &sharedIndexInformer{processor: &sharedProcessor{}}
	s.processor.s = s
	s.startedLock.s = s
	switch side() {
	case sideClientGo:
		s.build = func(clock.Clock) SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(lw, exampleObject, defaultEventHandlerResyncPeriod, toolscache.Indexers{})
		}
	case sideKinformer, sideKinformerCrash:
		s.build = func(clk clock.Clock) SharedIndexInformer {
			opts := clientgo.Options[*corev1.Pod]{Informer: informer.Options[*corev1.Pod]{
				Source:       fromClientGo[*corev1.Pod](lw),
				ResyncPeriod: defaultEventHandlerResyncPeriod,
			}, CrashOnHandlerPanic: side() == sideKinformerCrash}
			if clk != nil {
				opts.Informer.Clock = clk.(clock.WithTicker)
			}
			inf, err := clientgo.New(opts)
			if err != nil {
				panic(err)
			}
			return inf
		}
	default:
		panic(fmt.Sprintf("shim: %s=%q, want %q, %q or %q", sideEnv, side(), sideClientGo, sideKinformer, sideKinformerCrash))
	}
	return s
}

// sharedIndexInformer is the informer under test (inf), with the fields the
// test reads and sets.
type sharedIndexInformer struct {
	// clock, set by the test before the informer is used, replaces the
	// informer's clock (processor.clock is the same clock: client-go has
	// two fields for it, the test sets both).
	clock     clock.Clock
	processor *sharedProcessor
	// resyncCheckPeriod is refreshed after each handler is added.
	resyncCheckPeriod time.Duration
	// started is refreshed when the test takes startedLock.
	startedLock stateLock
	started     bool

	build func(clock.Clock) SharedIndexInformer
	// once builds inf (and, on client-go's side, hands it the clock).
	once sync.Once
	inf  SharedIndexInformer
}

func (s *sharedIndexInformer) get() SharedIndexInformer {
	s.once.Do(func() {
		clk := s.clock
		if clk == nil {
			clk = s.processor.clock
		}
		s.inf = s.build(clk)
		if clk != nil && side() == sideClientGo {
			setClientGoClock(s.inf, clk)
		}
	})
	return s.inf
}

// stateLock is sharedIndexInformer.startedLock: taking it refreshes the
// fields the test then reads under it.
type stateLock struct {
	mu sync.Mutex
	s  *sharedIndexInformer
}

func (l *stateLock) Lock() {
	l.mu.Lock()
	l.s.started = inspect(l.s.get()).started()
	l.s.processor.listeners = inspect(l.s.get()).handlers()
}

func (l *stateLock) Unlock() { l.mu.Unlock() }

// sharedProcessor holds what the test reads of client-go's processor.
type sharedProcessor struct {
	s *sharedIndexInformer
	// listeners has one entry per registered handler, refreshed when the
	// test takes startedLock.
	listeners []struct{}
	clock     clock.Clock
}

// processorListener is what the test reads of one registration.
type processorListener struct {
	resyncPeriod time.Duration
}

// getListener returns the registration's listener, nil when h is not
// registered with this informer.
func (p *sharedProcessor) getListener(h ResourceEventHandlerRegistration) *processorListener {
	period, ok := inspect(p.s.get()).registration(h)
	if !ok {
		return nil
	}
	return &processorListener{resyncPeriod: period}
}

// refreshResyncCheckPeriod runs after each handler is added, under
// startedLock as client-go writes it.
func (s *sharedIndexInformer) refreshResyncCheckPeriod() {
	s.startedLock.mu.Lock()
	defer s.startedLock.mu.Unlock()
	s.resyncCheckPeriod = inspect(s.get()).resyncCheckPeriod()
}

func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	defer s.refreshResyncCheckPeriod()
	return s.get().AddEventHandler(handler)
}

func (s *sharedIndexInformer) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error) {
	defer s.refreshResyncCheckPeriod()
	return s.get().AddEventHandlerWithResyncPeriod(handler, resyncPeriod)
}

func (s *sharedIndexInformer) AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error) {
	defer s.refreshResyncCheckPeriod()
	return s.get().AddEventHandlerWithOptions(handler, options)
}

func (s *sharedIndexInformer) RemoveEventHandler(handle ResourceEventHandlerRegistration) error {
	return s.get().RemoveEventHandler(handle)
}

func (s *sharedIndexInformer) GetStore() toolscache.Store { return s.get().GetStore() }

func (s *sharedIndexInformer) GetController() toolscache.Controller { return s.get().GetController() }

func (s *sharedIndexInformer) Run(stopCh <-chan struct{}) { s.get().Run(stopCh) }

func (s *sharedIndexInformer) RunWithContext(ctx context.Context) { s.get().RunWithContext(ctx) }

func (s *sharedIndexInformer) HasSynced() bool { return s.get().HasSynced() }

func (s *sharedIndexInformer) HasSyncedChecker() toolscache.DoneChecker {
	return s.get().HasSyncedChecker()
}

func (s *sharedIndexInformer) LastSyncResourceVersion() string {
	return s.get().LastSyncResourceVersion()
}

func (s *sharedIndexInformer) SetWatchErrorHandler(handler toolscache.WatchErrorHandler) error {
	return s.get().SetWatchErrorHandler(handler)
}

func (s *sharedIndexInformer) SetWatchErrorHandlerWithContext(handler toolscache.WatchErrorHandlerWithContext) error {
	return s.get().SetWatchErrorHandlerWithContext(handler)
}

func (s *sharedIndexInformer) SetTransform(handler toolscache.TransformFunc) error {
	return s.get().SetTransform(handler)
}

func (s *sharedIndexInformer) IsStopped() bool { return s.get().IsStopped() }

func (s *sharedIndexInformer) AddIndexers(indexers toolscache.Indexers) error {
	return s.get().AddIndexers(indexers)
}

func (s *sharedIndexInformer) GetIndexer() toolscache.Indexer { return s.get().GetIndexer() }

var _ SharedIndexInformer = (*sharedIndexInformer)(nil)
