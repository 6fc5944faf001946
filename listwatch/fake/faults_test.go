package fake_test

import (
	"errors"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

// result is what one call to Next returned.
type result struct {
	ev  listwatch.Event[*corev1.ConfigMap]
	err error
}

// nextAsync calls w.Next on a new goroutine and returns where its result
// arrives. The goroutine exits once Next returns; closing w makes it return.
func nextAsync(w listwatch.Watch[*corev1.ConfigMap]) <-chan result {
	got := make(chan result, 1)
	go func() {
		ev, err := w.Next()
		got <- result{ev, err}
	}()
	return got
}

func TestFakeDroppedLastChangeWakesBlockedReaderWithExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSource(t, fake.Options[*corev1.ConfigMap]{})
		w, err := s.Watch(t.Context(), listwatch.Options{ResourceVersion: s.ResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		got := nextAsync(w)
		synctest.Wait() // the reader is blocked in Next on an empty stream
		s.DropNextEvent()
		mustCreate(t, s, "dropped") // the last change: no write follows it
		synctest.Wait()
		select {
		case r := <-got:
			if r.err != nil || r.ev.Type != listwatch.Error || !errors.Is(r.ev.Err, listwatch.ErrExpired) {
				t.Fatalf("after the dropped change: %+v, %v; want an Error event with ErrExpired", r.ev, r.err)
			}
		default:
			t.Fatal("reader still blocked in Next after the dropped change")
		}
	})
}
