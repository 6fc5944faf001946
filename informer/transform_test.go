package informer

import (
	"errors"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/reflector"
)

var errBadObject = errors.New("cannot transform this one")

// A transform that fails for one listed object skips that object alone:
// the rest of the list is cached, the informer syncs, the failure is
// reported once, and later changes to the good objects still arrive. It
// used to fail the whole list and retry it forever.
func TestSharedTransformErrorSkipsOnlyThatListedObject(t *testing.T) {
	for _, mode := range []reflector.StreamingMode{reflector.StreamingOff, reflector.StreamingOn} {
		synctest.Test(t, func(t *testing.T) {
			transform := func(o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				if o.Name == "o3" {
					return o, errBadObject
				}
				return o, nil
			}
			h := startShared(t, 10, Options[*corev1.ConfigMap]{
				Transform: transform,
				Settings:  reflector.Settings{Streaming: mode},
			}, nil)
			defer h.stop()
			synctest.Wait()
			if !h.inf.HasSynced() {
				t.Fatalf("streaming %v: not synced after a list with one bad object", mode)
			}
			view := h.inf.Cache()
			if n := view.Len(); n != 9 {
				t.Fatalf("streaming %v: %d objects cached, want 9", mode, n)
			}
			if _, ok, _ := view.GetByKey("ns/o3"); ok {
				t.Fatalf("streaming %v: the object whose transform failed was cached", mode)
			}
			var bad []error
			for _, err := range h.errs.all() {
				if errors.Is(err, errBadObject) {
					bad = append(bad, err)
				}
			}
			if len(bad) != 1 {
				t.Fatalf("streaming %v: transform error reported %d times, want 1: %v", mode, len(bad), h.errs.all())
			}
			if mode == reflector.StreamingOff && !errors.Is(bad[0], cache.ErrSkipped) {
				t.Errorf("paged list: reported error %v does not match cache.ErrSkipped", bad[0])
			}
			if got := len(h.src.ListCalls()); mode == reflector.StreamingOff && got != 1 {
				t.Fatalf("paged list: %d list calls, want 1 (no retry)", got)
			}
			h.update("o5")
			synctest.Wait()
			if o, _, _ := view.GetByKey("ns/o5"); o == nil || o.Labels["n"] == "" {
				t.Fatalf("streaming %v: update after the skipped object did not arrive", mode)
			}
		})
	}
}

// A first list whose every item is skipped still syncs the informer (an
// empty cache), since no pop follows to notice the end of the list.
func TestSharedSyncsWhenEveryListedObjectIsSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startShared(t, 3, Options[*corev1.ConfigMap]{
			Transform: func(o *corev1.ConfigMap) (*corev1.ConfigMap, error) { return o, errBadObject },
		}, nil)
		defer h.stop()
		synctest.Wait()
		if !h.inf.HasSynced() {
			t.Fatal("not synced after a list whose every object was skipped")
		}
		if n := h.inf.Cache().Len(); n != 0 {
			t.Fatalf("%d objects cached, want 0", n)
		}
	})
}
