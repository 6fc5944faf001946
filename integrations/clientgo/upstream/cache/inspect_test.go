package cache

// How the shim reads, for each side, the state shared_informer_test.go reads
// of client-go's informer: whether it has started, how many handlers are
// registered, whether a handle is registered and with which resync period,
// and the period of its resync check. None of it is exported by either
// informer, so both are read the same way, by reflection on their unexported
// fields, under the lock that guards them (taken through unsafe). A renamed
// field fails the test loudly (reflect panics), never silently.

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/integrations/clientgo"
)

// inspector reads an informer's registration state.
type inspector interface {
	started() bool
	// handlers has one entry per registered handler.
	handlers() []struct{}
	// registration reports whether h is registered with this informer, and
	// its resync period in client-go's terms (0: never).
	registration(h ResourceEventHandlerRegistration) (time.Duration, bool)
	resyncCheckPeriod() time.Duration
}

func inspect(inf SharedIndexInformer) inspector {
	if k, ok := inf.(*clientgo.SharedIndexInformer[*corev1.Pod]); ok {
		return kinformerInspector{reflect.ValueOf(k.Shared()).Elem()}
	}
	return clientGoInspector{reflect.ValueOf(inf).Elem()}
}

// field returns v's field name, which may be unexported, as a settable value.
func field(v reflect.Value, name string) reflect.Value {
	f := v.FieldByName(name)
	if !f.IsValid() {
		panic("shim: no field " + name + " in " + v.Type().String())
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

func mutex(v reflect.Value, name string) *sync.Mutex {
	return field(v, name).Addr().Interface().(*sync.Mutex)
}

// setClientGoClock replaces client-go's informer's clock and its processor's,
// as the upstream test does from inside the package.
func setClientGoClock(inf SharedIndexInformer, clk clock.Clock) {
	v := reflect.ValueOf(inf).Elem()
	field(v, "clock").Set(reflect.ValueOf(clk))
	field(field(v, "processor").Elem(), "clock").Set(reflect.ValueOf(clk))
}

// clientGoInspector reads client-go's *sharedIndexInformer.
type clientGoInspector struct{ v reflect.Value }

func (c clientGoInspector) started() bool {
	mu := mutex(c.v, "startedLock")
	mu.Lock()
	defer mu.Unlock()
	return field(c.v, "started").Bool()
}

func (c clientGoInspector) handlers() []struct{} {
	mu := mutex(c.v, "startedLock")
	mu.Lock()
	defer mu.Unlock()
	p := field(c.v, "processor").Elem()
	lmu := field(p, "listenersLock").Addr().Interface().(*sync.RWMutex)
	lmu.RLock()
	defer lmu.RUnlock()
	return make([]struct{}, field(p, "listeners").Len())
}

func (c clientGoInspector) registration(h ResourceEventHandlerRegistration) (time.Duration, bool) {
	p := field(c.v, "processor").Elem()
	mu := field(p, "listenersLock").Addr().Interface().(*sync.RWMutex)
	mu.RLock()
	defer mu.RUnlock()
	hv := reflect.ValueOf(h)
	listeners := field(p, "listeners")
	if hv.Type() != listeners.Type().Key() {
		return 0, false
	}
	if !listeners.MapIndex(hv).IsValid() {
		return 0, false
	}
	return time.Duration(field(hv.Elem(), "resyncPeriod").Int()), true
}

func (c clientGoInspector) resyncCheckPeriod() time.Duration {
	mu := mutex(c.v, "startedLock")
	mu.Lock()
	defer mu.Unlock()
	return time.Duration(field(c.v, "resyncCheckPeriod").Int())
}

// kinformerInspector reads the adapter's *informer.Shared: its handler set
// (handlers) holds one listener per registration.
type kinformerInspector struct{ v reflect.Value }

func (k kinformerInspector) started() bool {
	return field(k.v, "started").Addr().Interface().(*atomic.Bool).Load()
}

// handlerSet runs f with the handler set locked.
func (k kinformerInspector) handlerSet(f func(hs reflect.Value)) {
	hs := field(k.v, "handlers").Elem()
	mu := mutex(hs, "mu")
	mu.Lock()
	defer mu.Unlock()
	f(hs)
}

func (k kinformerInspector) handlers() (out []struct{}) {
	k.handlerSet(func(hs reflect.Value) { out = make([]struct{}, field(hs, "listeners").Len()) })
	return out
}

// registration finds the listener of h's kinformer registration (the
// adapter's handle holds it in its field reg).
func (k kinformerInspector) registration(h ResourceEventHandlerRegistration) (period time.Duration, found bool) {
	hv := reflect.ValueOf(h)
	if hv.Kind() != reflect.Pointer || hv.Elem().Kind() != reflect.Struct || !hv.Elem().FieldByName("reg").IsValid() {
		return 0, false // not a handle of the adapter
	}
	reg := field(hv.Elem(), "reg").Pointer()
	k.handlerSet(func(hs reflect.Value) {
		ls := field(hs, "listeners")
		for i := range ls.Len() {
			l := ls.Index(i).Elem()
			if field(l, "reg").Pointer() == reg {
				period, found = max(time.Duration(field(l, "resyncPeriod").Int()), 0), true
				return
			}
		}
	})
	return period, found
}

// resyncCheckPeriod is the period of kinformer's resync timer. Run fixes it
// (handlerSet.resyncCheck); before, it is what Run would fix: the shortest
// positive period of the informer's default and its handlers'.
func (k kinformerInspector) resyncCheckPeriod() (period time.Duration) {
	k.handlerSet(func(hs reflect.Value) {
		if field(hs, "state").Uint() != 0 { // running or stopped
			period = time.Duration(field(hs, "resyncCheck").Int())
			return
		}
		period = max(time.Duration(field(hs, "resync").Int()), 0)
		ls := field(hs, "listeners")
		for i := range ls.Len() {
			if p := time.Duration(field(ls.Index(i).Elem(), "resyncPeriod").Int()); p > 0 && (period == 0 || p < period) {
				period = p
			}
		}
	})
	return period
}
