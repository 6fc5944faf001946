package clientgo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// The tests in this file cover what only the adapter has: its constructor,
// the read-only cache, wrapping an existing informer, and where it reports
// what client-go would crash or log on.

func newSource(t *testing.T, names ...string) *fake.Source[*corev1.ConfigMap] {
	t.Helper()
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, err := src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}}); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// run runs inf until the returned function is called, which waits for Run to
// return.
func run(inf interface{ RunWithContext(context.Context) }) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	return func() { cancel(); <-done }
}

func TestNewRequiresExactlyOneInformer(t *testing.T) {
	src := newSource(t)
	shared, err := informer.NewShared(informer.Options[*corev1.ConfigMap]{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options[*corev1.ConfigMap]{}); err == nil {
		t.Error("New without an informer succeeded")
	}
	if _, err := New(Options[*corev1.ConfigMap]{Shared: shared, Informer: informer.Options[*corev1.ConfigMap]{Source: src}}); err == nil {
		t.Error("New with both succeeded")
	}
}

type errSink struct {
	mu   sync.Mutex
	errs []error
}

func (s *errSink) add(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

func (s *errSink) all() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

func TestIndexerWritesFailReadOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, err := New(Options[*corev1.ConfigMap]{Informer: informer.Options[*corev1.ConfigMap]{Source: newSource(t, "a")}})
		if err != nil {
			t.Fatal(err)
		}
		stop := run(inf)
		defer stop()
		synctest.Wait()
		x := inf.GetIndexer()
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "z"}}
		for name, write := range map[string]func() error{
			"Add":     func() error { return x.Add(obj) },
			"Update":  func() error { return x.Update(obj) },
			"Delete":  func() error { return x.Delete(obj) },
			"Replace": func() error { return x.Replace([]any{obj}, "9") },
		} {
			if err := write(); !errors.Is(err, ErrReadOnly) {
				t.Errorf("%s: error %v, want ErrReadOnly", name, err)
			}
		}
		if err := x.Resync(); err != nil {
			t.Errorf("Resync: %v", err)
		}
		if keys := x.ListKeys(); len(keys) != 1 || keys[0] != "ns/a" {
			t.Errorf("writes changed the cache: %v", keys)
		}
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), ErrReadOnly.Error()) {
					t.Errorf("Bookmark: recovered %v, want a panic naming ErrReadOnly", r)
				}
			}()
			x.Bookmark("10")
		}()
		if got, want := x.LastStoreSyncResourceVersion(), "2"; got != want {
			t.Errorf("LastStoreSyncResourceVersion %q, want %q", got, want)
		}
		// Get takes any object client-go can key, a tombstone included.
		if _, ok, err := x.Get(toolscache.DeletedFinalStateUnknown{Key: "ns/a"}); err != nil || !ok {
			t.Errorf("Get by tombstone: %v %v", ok, err)
		}
		if _, _, err := x.Get("not an object"); err == nil {
			t.Error("Get of a string succeeded")
		}
	})
}

func TestWrappedInformerCannotBeReconfigured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(t, "a", "b")
		shared, err := informer.NewShared(informer.Options[*corev1.ConfigMap]{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		inf, err := New(Options[*corev1.ConfigMap]{Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		if inf.Shared() != shared {
			t.Error("Shared does not return the wrapped informer")
		}
		if err := inf.SetTransform(func(o any) (any, error) { return o, nil }); !errors.Is(err, ErrConfigured) {
			t.Errorf("SetTransform on a wrapped informer: %v", err)
		}
		if err := inf.SetWatchErrorHandler(func(*toolscache.Reflector, error) {}); !errors.Is(err, ErrConfigured) {
			t.Errorf("SetWatchErrorHandler on a wrapped informer: %v", err)
		}
		rec := &recorder{}
		if _, err := inf.AddEventHandler(rec); err != nil {
			t.Fatal(err)
		}
		// Its owner runs it; the adapter's Run then returns at once.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- shared.Run(ctx) }()
		synctest.Wait()
		inf.Run(ctx.Done())
		assertEvents(t, "wrapped", rec.take(), "add a@2 initial", "add b@3 initial")
		src.DropNextEvent()
		if _, err := src.Delete("ns", "b"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		assertEvents(t, "missed delete", withoutResyncs(rec.take()), "tombstone ns/b b@3")
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestTransformOfAnotherTypeSkipsTheObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := &errSink{}
		inf, err := New(Options[*corev1.ConfigMap]{Informer: informer.Options[*corev1.ConfigMap]{
			Source: newSource(t, "a", "b"), ErrorHandler: errs.add,
		}})
		if err != nil {
			t.Fatal(err)
		}
		err = inf.SetTransform(func(o any) (any, error) {
			if o.(*corev1.ConfigMap).Name == "b" {
				return &corev1.Secret{}, nil
			}
			return o, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		stop := run(inf)
		defer stop()
		synctest.Wait()
		if keys := inf.GetStore().ListKeys(); len(keys) != 1 || keys[0] != "ns/a" {
			t.Errorf("cache %v, want only ns/a", keys)
		}
		if !inf.HasSynced() {
			t.Error("not synced")
		}
		if got := errs.all(); len(got) == 0 || !strings.Contains(got[0].Error(), "*v1.Secret") {
			t.Errorf("errors %v, want one naming the wrong type", got)
		}
	})
}

func TestHandlerPanicIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := &errSink{}
		inf, err := New(Options[*corev1.ConfigMap]{Informer: informer.Options[*corev1.ConfigMap]{
			Source: newSource(t, "a"), ErrorHandler: errs.add,
		}})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) { panic("boom") }})
		if err != nil {
			t.Fatal(err)
		}
		stop := run(inf)
		defer stop()
		synctest.Wait()
		var pe *informer.HandlerPanicError
		if got := errs.all(); len(got) != 1 || !errors.As(got[0], &pe) {
			t.Errorf("errors %v, want one *HandlerPanicError", got)
		}
		if !reg.HasSynced() {
			t.Error("registration of a panicking handler not synced")
		}
	})
}

func TestHasSyncedCheckerLetsGoOfItsRegistration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, err := New(Options[*corev1.ConfigMap]{Informer: informer.Options[*corev1.ConfigMap]{Source: newSource(t, "a")}})
		if err != nil {
			t.Fatal(err)
		}
		checker := inf.HasSyncedChecker()
		if toolscache.IsDone(checker) {
			t.Fatal("done before Run")
		}
		if inf.syncedReg == nil {
			t.Fatal("no registration behind the checker")
		}
		stop := run(inf)
		defer stop()
		synctest.Wait()
		if !toolscache.IsDone(checker) {
			t.Fatal("not done after sync")
		}
		if !toolscache.IsDone(inf.HasSyncedChecker()) {
			t.Error("later checker not done")
		}
		if inf.syncedReg != nil {
			t.Error("registration kept after sync")
		}
		// The registration was removed: a second removal fails.
		if !strings.Contains(checker.Name(), "ConfigMap") {
			t.Errorf("checker name %q", checker.Name())
		}
	})
}

func TestRemoveEventHandlerOfAnotherInformer(t *testing.T) {
	inf, err := New(Options[*corev1.ConfigMap]{Informer: informer.Options[*corev1.ConfigMap]{Source: newSource(t)}})
	if err != nil {
		t.Fatal(err)
	}
	other := toolscache.NewSharedIndexInformer(clientGoSource{newSource(t)}, &corev1.ConfigMap{}, 0, nil)
	reg, err := other.AddEventHandler(&recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.RemoveEventHandler(reg); err == nil {
		t.Error("removing another informer's handle succeeded")
	}
}

func TestWrappedInformerKeepsItsDefaultResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared, err := informer.NewShared(informer.Options[*corev1.ConfigMap]{Source: newSource(t, "a"), ResyncPeriod: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		inf, err := New(Options[*corev1.ConfigMap]{Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		byDefault, never := &recorder{}, &recorder{}
		if _, err := inf.AddEventHandler(byDefault); err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddEventHandlerWithResyncPeriod(never, 0); err != nil {
			t.Fatal(err)
		}
		stop := run(inf)
		defer stop()
		time.Sleep(90 * time.Second)
		synctest.Wait()
		if got := resyncs(byDefault.take()); got != 1 {
			t.Errorf("handler with the informer's default: %d resyncs in 90s, want 1", got)
		}
		if got := resyncs(never.take()); got != 0 {
			t.Errorf("handler with period 0: %d resyncs, want 0", got)
		}
	})
}

func TestAddEventHandlerOnStoppedMatchesErrStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, err := New(Options[*corev1.ConfigMap]{Informer: informer.Options[*corev1.ConfigMap]{Source: newSource(t, "a")}})
		if err != nil {
			t.Fatal(err)
		}
		run(inf)()
		if _, err := inf.AddEventHandler(&recorder{}); !errors.Is(err, informer.ErrStopped) {
			t.Errorf("AddEventHandler after stop: %v, want one matching informer.ErrStopped", err)
		}
	})
}

// TestCrashOnHandlerPanicCrashesTheProcess runs itself in a child process,
// whose handler panics under Options.CrashOnHandlerPanic: as under client-go,
// the panic is logged and ends the process.
func TestCrashOnHandlerPanicCrashesTheProcess(t *testing.T) {
	if os.Getenv("KINFORMER_TEST_HANDLER_CRASH") == "1" {
		inf, err := New(Options[*corev1.ConfigMap]{
			Informer:            informer.Options[*corev1.ConfigMap]{Source: newSource(t, "a")},
			CrashOnHandlerPanic: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) { panic("handler boom") }}); err != nil {
			t.Fatal(err)
		}
		run(inf) // never stopped: the process ends first
		<-make(chan struct{})
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashOnHandlerPanicCrashesTheProcess$", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), "KINFORMER_TEST_HANDLER_CRASH=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child process did not crash:\n%s", out)
	}
	for _, want := range []string{`"Observed a panic"`, "panic: handler boom"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
}

// TestTwoAdaptersOfOneInformerShareHandles: two adapters presenting the same
// kinformer informer (Options.Shared) are one informer to client-go code: a
// handle added through one is removed through the other.
func TestTwoAdaptersOfOneInformerShareHandles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(t, "a")
		shared, err := informer.NewShared(informer.Options[*corev1.ConfigMap]{Source: src})
		if err != nil {
			t.Fatal(err)
		}
		a, err := New(Options[*corev1.ConfigMap]{Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(Options[*corev1.ConfigMap]{Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		reg, err := a.AddEventHandler(rec)
		if err != nil {
			t.Fatal(err)
		}
		stop := run(a)
		defer stop()
		synctest.Wait()
		rec.take()
		if err := b.RemoveEventHandler(reg); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		assertEvents(t, "handler removed through the other adapter", rec.take())
	})
}
