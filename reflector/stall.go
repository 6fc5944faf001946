package reflector

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
)

// stallGuard closes a watch through which nothing has come for too long:
// one goroutine, owned by the step reading the watch, which ends it with
// stop. The reader calls seen after each Next.
type stallGuard struct {
	events atomic.Uint64 // Next calls returned, bumped by the reader
	fired  atomic.Bool   // the guard closed the watch
	once   sync.Once     // closes done
	done   chan struct{} // closed by stop: the guard's goroutine returns
	exited chan struct{} // closed by the guard's goroutine on return
}

// guardWatch starts a guard on w. It closes w once limit has passed on
// clk with no call to seen. The silence is checked every limit, so a
// stall is caught between limit and twice limit after the last event.
func guardWatch[T cache.Object](w listwatch.Watch[T], clk clock.WithTicker, limit time.Duration) *stallGuard {
	g := &stallGuard{done: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(g.exited)
		last := g.events.Load()
		for {
			t := clk.NewTimer(limit)
			select {
			case <-g.done:
				t.Stop()
				return
			case <-t.C():
			}
			if n := g.events.Load(); n != last {
				last = n
				continue
			}
			g.fired.Store(true)
			_ = w.Close()
			return
		}
	}()
	return g
}

// seen records that Next returned.
func (g *stallGuard) seen() { g.events.Add(1) }

// stop ends the guard, waits for its goroutine and reports whether it
// closed the watch. It may be called more than once, and on a zero
// stallGuard (no guard: it reports false).
func (g *stallGuard) stop() bool {
	if g.done == nil {
		return false
	}
	g.once.Do(func() { close(g.done) })
	<-g.exited
	return g.fired.Load()
}
