package clientgo

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/listwatch"
)

// mirror is a handler that rebuilds the source's state from notifications
// alone, and checks that each update's old object is the version it last saw.
type mirror struct {
	t     *testing.T
	mu    sync.Mutex
	state map[string]string // name -> resource version
	// unseenDeletes allows the delete of an object never seen, which
	// client-go notifies after a gap in the stream (see
	// TestDifferenceDeleteAfterGap); unseen counts them.
	unseenDeletes bool
	unseen        int
}

func (m *mirror) OnAdd(obj any, _ bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cm := obj.(*corev1.ConfigMap)
	if rv, ok := m.state[cm.Name]; ok {
		m.t.Errorf("add of %s@%s, already seen @%s", cm.Name, cm.ResourceVersion, rv)
	}
	m.state[cm.Name] = cm.ResourceVersion
}

func (m *mirror) OnUpdate(old, obj any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, n := old.(*corev1.ConfigMap), obj.(*corev1.ConfigMap)
	if rv := m.state[n.Name]; rv != o.ResourceVersion {
		m.t.Errorf("update of %s from @%s, last seen @%s", n.Name, o.ResourceVersion, rv)
	}
	m.state[n.Name] = n.ResourceVersion
}

func (m *mirror) OnDelete(obj any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	cm := obj.(*corev1.ConfigMap)
	if _, ok := m.state[cm.Name]; !ok {
		if !m.unseenDeletes {
			m.t.Errorf("delete of %s, never seen", cm.Name)
		}
		m.unseen++
	}
	delete(m.state, cm.Name)
}

func (m *mirror) snapshot() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.state)
}

// TestConformanceRandomChangesAndFaults applies random changes and faults
// (lost events answered with 410, reset and closed watches, compaction) and
// requires, after each burst, the cache and a handler's view built from
// notifications alone to equal the source, on both implementations, with the
// same random sequence.
func TestConformanceRandomChangesAndFaults(t *testing.T) {
	const bursts, perBurst = 30, 20
	conform(t, func(t *testing.T, e *env) {
		rng := rand.New(rand.NewPCG(7, 11))
		for i := range 10 {
			e.create(fmt.Sprint("o", i))
		}
		e.build(0, nil)
		m := &mirror{t: t, state: map[string]string{}, unseenDeletes: e.impl.name == "client-go"}
		e.addHandler(m)
		e.run()
		e.settle()
		next := 10
		for b := range bursts {
			for range perBurst {
				names := slices.Sorted(maps.Keys(e.sourceVersions()))
				var any string // a random existing name, if any
				if len(names) > 0 {
					any = names[rng.IntN(len(names))]
				}
				switch r := rng.IntN(10); {
				case r < 3 || any == "":
					e.create(fmt.Sprint("o", next))
					next++
				case r < 6:
					e.update(any)
				case r < 8:
					e.delete(any)
				case r == 8:
					e.src.DropNextEvent()
				default:
					switch rng.IntN(3) {
					case 0:
						e.src.ResetWatches()
					case 1:
						e.src.CloseWatches()
					default:
						e.src.Compact()
						e.src.SendError(listwatch.ErrExpired)
					}
				}
			}
			// Faults in a row grow the back-off (up to 30 s in both):
			// let bubble time pass well beyond it.
			time.Sleep(2 * time.Minute)
			synctest.Wait()
			truth := e.sourceVersions()
			if got := cacheVersions(e.inf.GetStore().List()); !maps.Equal(got, truth) {
				t.Fatalf("burst %d: cache %v, source %v", b, got, truth)
			}
			if got := m.snapshot(); !maps.Equal(got, truth) {
				t.Fatalf("burst %d: handler's view %v, source %v", b, got, truth)
			}
		}
		if m.unseen > 0 {
			t.Logf("%d deletes of objects never seen (a known client-go difference)", m.unseen)
		}
	})
}
