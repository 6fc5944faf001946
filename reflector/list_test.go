package reflector_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/reflector"
)

// drainFIFO pops every queued key and returns the keys, sorted.
func drainFIFO(t *testing.T, f *cache.DeltaFIFO[obj]) []string {
	t.Helper()
	var keys []string
	for f.Len() > 0 {
		_, err := f.Pop(context.Background(), func(key string, _ cache.Deltas[obj], _ bool) error {
			keys = append(keys, key)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(keys)
	return keys
}

// An object the store cannot use (its Transform or key function fails) is
// skipped and reported, and the rest of the list syncs: the list is not
// retried, and the watch goes on, skipping such objects too.
func TestReflectorListSkipsObjectsTheStoreRejects(t *testing.T) {
	errBad := errors.New("bad object")
	bad := func(o obj) bool { return strings.HasPrefix(o.Name, "x") }
	for _, how := range []string{"transform", "key function"} {
		for _, mode := range []reflector.StreamingMode{reflector.StreamingOff, reflector.StreamingOn} {
			t.Run(fmt.Sprintf("%s/streaming=%v", how, mode == reflector.StreamingOn), func(t *testing.T) {
				fifoOpts := cache.DeltaFIFOOptions[obj]{}
				if how == "transform" {
					fifoOpts.Transform = func(o obj) (obj, error) {
						if bad(o) {
							return nil, errBad
						}
						return o, nil
					}
				} else {
					fifoOpts.KeyFunc = func(o obj) (string, error) {
						if bad(o) {
							return "", errBad
						}
						return cache.MetaNamespaceKey(o)
					}
				}
				fifo := cache.NewDeltaFIFO(fifoOpts)
				m := newTally()
				run(t, fake.Options[obj]{}, plain, func(h *harness) {
					h.create("a", "x1", "b")
					h.r, _ = reflector.New(reflector.Options[obj]{
						Source: h.src, Store: fifo, ErrorHandler: h.errs.handle, Metrics: m,
						Settings: reflector.Settings{Streaming: mode},
					})
				}, func(h *harness) {
					if lists := len(h.src.ListCalls()) + m.n("streaming.attempts"); lists != 1 || len(h.src.WatchCalls()) != 1 {
						t.Fatalf("%d lists, %d watches: want one of each", lists, len(h.src.WatchCalls()))
					}
					skipped := h.errs.find(listwatch.PhaseList, cache.ErrSkipped)
					if len(skipped) != 1 || h.errs.len() != 1 || !errors.Is(skipped[0], errBad) || !strings.Contains(skipped[0].Error(), `"ns/x1"`) {
						t.Fatalf("errors %v", h.errs.errs)
					}
					var se *cache.SkippedError
					if !errors.As(skipped[0], &se) || len(se.Errs) != 1 || se.Total != 3 {
						t.Fatalf("SkippedError %+v", se)
					}
					if got := drainFIFO(t, fifo); !slices.Equal(got, []string{"ns/a", "ns/b"}) || !fifo.HasSynced() {
						t.Fatalf("queue held %v (synced %v), want ns/a, ns/b (synced)", got, fifo.HasSynced())
					}
					h.create("x2", "c")
					h.settle()
					if errs := h.errs.find(listwatch.PhaseWatchStream, errBad); len(errs) != 1 || !strings.Contains(errs[0].Error(), "ns/x2") {
						t.Fatalf("errors %v", h.errs.errs)
					}
					if got := drainFIFO(t, fifo); !slices.Equal(got, []string{"ns/c"}) {
						t.Fatalf("watch queued %v, want ns/c", got)
					}
					if got, want := h.r.LastSyncResourceVersion(), h.src.ResourceVersion(); got != want {
						t.Fatalf("version %q, source at %q", got, want)
					}
					items := "paged.items"
					if mode == reflector.StreamingOn {
						items = "streaming.items"
					}
					if _, n := m.get(items); m.n("skipped") != 2 || n != 2 || m.n("paged.errors")+m.n("streaming.errors") != 0 {
						t.Fatalf("skipped %d, %s %v, list errors %d", m.n("skipped"), items, n, m.n("paged.errors")+m.n("streaming.errors"))
					}
				})
			})
		}
	}
}

// The reflector leaves keys to the store: with one that keys nothing
// (memStore), an object its own key function would refuse is stored.
func TestReflectorLeavesKeyChecksToTheStore(t *testing.T) {
	opts := plain
	opts.KeyFunc = func(obj) (string, error) { return "", errors.New("never called on a plain list or watch") }
	run(t, fake.Options[obj]{}, opts, func(h *harness) { h.create("a") }, func(h *harness) {
		h.create("b")
		h.settle()
		h.converged()
		if h.errs.len() != 0 {
			t.Fatalf("errors %v", h.errs.errs)
		}
	})
}
