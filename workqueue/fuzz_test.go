package workqueue

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
)

// model is the queue's contract written as plainly as possible, for one
// goroutine and non-blocking gets.
type model struct {
	order      []int
	dirty      map[int]bool
	processing map[int]bool // item -> added again while held
	shutdown   bool
}

func (m *model) add(k int) {
	if m.shutdown || m.dirty[k] {
		return
	}
	m.dirty[k] = true
	if _, held := m.processing[k]; held {
		m.processing[k] = true
		return
	}
	m.order = append(m.order, k)
}

func (m *model) get() (int, error) {
	if len(m.order) > 0 {
		k := m.order[0]
		m.order = m.order[1:]
		delete(m.dirty, k)
		m.processing[k] = false
		return k, nil
	}
	if m.shutdown && len(m.dirty) == 0 {
		return 0, ErrShutDown
	}
	return 0, context.Canceled
}

func (m *model) done(k int) {
	readded, held := m.processing[k]
	if !held {
		return
	}
	delete(m.processing, k)
	if readded {
		m.order = append(m.order, k)
	}
}

// FuzzQueueMatchesModel drives the queue and the model with the same
// operations, one per input byte, and compares every result.
func FuzzQueueMatchesModel(f *testing.F) {
	f.Add([]byte{0, 4, 1, 0, 2, 1, 2, 0})
	f.Add([]byte{0, 1, 0, 2, 1, 255, 2, 1, 1})
	f.Add([]byte{8, 12, 16, 1, 1, 1, 8, 9, 2, 6, 10, 255, 1, 1, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		q := New(Options[int]{})
		defer q.ShutDown()
		m := &model{dirty: map[int]bool{}, processing: map[int]bool{}}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		for i, b := range ops {
			k := int(b/4) % 8
			switch {
			case b == 255:
				q.ShutDown()
				m.shutdown = true
			case b%4 == 0:
				q.Add(k)
				m.add(k)
			case b%4 == 1:
				got, err := q.Get(cancelled)
				want, wantErr := m.get()
				if got != want || !errors.Is(err, wantErr) {
					t.Fatalf("op %d: Get = %d, %v; model %d, %v", i, got, err, want, wantErr)
				}
			default:
				q.Done(k)
				m.done(k)
			}
			if got, want := q.Len(), len(m.dirty); got != want {
				t.Fatalf("op %d: Len = %d, model %d", i, got, want)
			}
		}
		// Whatever is left comes out in the model's order.
		var left, want []int
		for _, k := range slices.Sorted(maps.Keys(m.processing)) {
			q.Done(k)
			m.done(k)
		}
		for {
			k, err := q.Get(cancelled)
			if err != nil {
				break
			}
			left = append(left, k)
			q.Done(k)
		}
		for {
			k, err := m.get()
			if err != nil {
				break
			}
			want = append(want, k)
			m.done(k)
		}
		if !slices.Equal(left, want) {
			t.Fatalf("left %v, model %v", left, want)
		}
	})
}
