package workqueue

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
)

// FuzzQueueMatchesModel drives the queue and refQueue (model_test.go) with
// the same operations, one per input byte, and compares every result: adds
// at three priorities, non-blocking Gets, Done and ShutDown. An odd length
// makes Add and Done go through the queue's log.
func FuzzQueueMatchesModel(f *testing.F) {
	f.Add([]byte{0, 4, 1, 0, 2, 1, 2, 0})
	f.Add([]byte{0, 1, 0, 2, 1, 255, 2, 1, 1})
	f.Add([]byte{8, 12, 16, 1, 1, 1, 8, 9, 2, 6, 10, 255, 1, 1, 1})
	f.Add([]byte{64, 128, 4, 192, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		q := New(Options[int]{})
		q.alwaysLog = len(ops)%2 == 1
		defer q.ShutDown()
		m := newRefQueue()
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		priorities := []int{PriorityNormal, PriorityLow, 5, PriorityNormal}
		for i, b := range ops {
			k := int(b/4) % 8
			p := priorities[b>>6]
			switch {
			case b == 255:
				q.ShutDown()
				m.shutDown()
			case b%4 == 0:
				q.AddWithOptions(k, AddOptions{Priority: p})
				m.add(k, p)
			case b%4 == 1:
				got, err := q.Get(cancelled)
				want, wantErr := m.get()
				if !errors.Is(err, wantErr) || (err == nil && got != want) {
					t.Fatalf("op %d: Get = %d, %v; model %d, %v", i, got, err, want, wantErr)
				}
			default:
				q.Done(k)
				m.done(k)
			}
			if got, want := q.Len(), m.waiting(); got != want {
				t.Fatalf("op %d: Len = %d, model %d", i, got, want)
			}
		}
		// Whatever is left comes out in the model's order.
		var left, want []int
		for _, k := range slices.Sorted(maps.Keys(m.held)) {
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
