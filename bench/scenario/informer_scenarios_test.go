package scenario

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// finalVersions returns the last version of each of n pods after m
// round-robin updates: the last n events of the stream.
func finalVersions(n, m int) []*corev1.Pod {
	_, items := podList(n)
	return prebuiltUpdates(items, int64(n), m)[m-n:]
}

// TestInformerScenariosEndWithTheSourceState runs scenarios 1 to 5 at the
// small size on both sides and checks that each side's cache ends holding
// exactly the source's last version of every pod. No timing is asserted.
func TestInformerScenariosEndWithTheSourceState(t *testing.T) {
	_, listed := podList(initialSyncPods(Small))
	wuPods, wuUpdates := watchUpdatesSize(Small)
	bhPods, bhUpdates := blockedHandlerSize(Small)
	lrPods, lrUpdates := listerReadsSize(Small)
	tests := []struct {
		name string
		want []*corev1.Pod
	}{
		{"initial-sync", listed},
		{"cache-overhead", listed},
		{"watch-updates", finalVersions(wuPods, wuUpdates)},
		{"lister-reads", finalVersions(lrPods, lrUpdates)},
		{"blocked-handler", finalVersions(bhPods, bhUpdates)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *Scenario
			for _, r := range Matching(nil) {
				if r.Name == tt.name {
					s = &r
				}
			}
			if s == nil {
				t.Fatalf("scenario %s is not registered", tt.name)
			}
			want := cacheDigest(tt.want)
			for _, side := range Sides {
				r, err := s.Run(t.Context(), side, Small)
				if err != nil {
					t.Fatalf("%s: %v", side, err)
				}
				if r.Digest != want {
					t.Errorf("%s: cache %s, source %s", side, r.Digest, want)
				}
				if !(r.Value > 0) {
					t.Errorf("%s: value %v", side, r.Value)
				}
			}
		})
	}
	dropFixture()
}

func TestCacheDigestSeesVersions(t *testing.T) {
	_, items := podList(3)
	a := cacheDigest(items)
	if b := cacheDigest([]*corev1.Pod{items[2], items[0], items[1]}); b != a {
		t.Errorf("digest depends on order: %s vs %s", a, b)
	}
	changed := []*corev1.Pod{items[0], items[1], podUpdate(items[2], 99)}
	if b := cacheDigest(changed); b == a {
		t.Errorf("digest %s misses a changed version", b)
	}
	if b := cacheDigest(items[:2]); b == a {
		t.Errorf("digest %s misses a missing pod", b)
	}
}

func TestPodsAreRealisticAndDeterministic(t *testing.T) {
	a, b := newPod(42, 7), newPod(42, 7)
	if cacheDigest([]*corev1.Pod{a}) != cacheDigest([]*corev1.Pod{b}) || a.Name != b.Name {
		t.Fatal("newPod is not deterministic")
	}
	if len(a.Labels) == 0 || len(a.Annotations) == 0 || len(a.Spec.Containers) == 0 || a.Status.PodIP == "" {
		t.Fatalf("pod lacks labels, annotations, containers or status: %+v", a)
	}
}
