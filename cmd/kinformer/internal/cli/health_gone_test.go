package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/listwatch"
)

// notFound is what an informer of a resource whose definition was deleted
// reports, in phase.
func notFound(name string, phase listwatch.Phase) error {
	return reflectorErr(name, phase, fmt.Errorf("list: %w",
		apierrors.NewNotFound(schema.GroupResource{Group: "gone.kinformer.dev", Resource: "gizmos"}, "")))
}

// A resource type deleted under a running informer (its CRD removed) is
// told once, as kubectl would name it, however many retries fail and in
// whichever phase; while it lasts it is a condition; its return is told.
func TestHealthSaysOnceThatAResourceTypeIsGone(t *testing.T) {
	clock := newFakeClock("10:00:00")
	h := newHealth(testHost, nil, clock.now)
	const name = "gizmos.gone.kinformer.dev -n web"
	var said []string
	for i := range 10 {
		phase := listwatch.PhaseList
		if i%2 == 1 {
			phase = listwatch.PhaseWatchStart
		}
		h.failure(name, notFound(name, phase))
		h.backoff(name, 2*time.Second)
		said = append(said, h.takeNotes()...)
		clock.advance(2 * time.Second)
	}
	want := []string{`10:00:00 gizmos.gone.kinformer.dev -n web: the server no longer has the resource type "gizmos.gone.kinformer.dev" (was it deleted?); the cache keeps what it had, retrying in 2s`}
	if !slices.Equal(said, want) {
		t.Errorf("said\n%q\nwant\n%q", said, want)
	}
	if got := h.statusLines(); len(got) != 1 || !strings.Contains(got[0], `resource type "gizmos.gone.kinformer.dev" gone since 10:00:00`) {
		t.Errorf("status %q, want the type gone since 10:00:00", got)
	}
	h.listed(name, 3)
	if got := h.takeNotes(); len(got) != 1 || !strings.HasSuffix(got[0], name+`: the resource type is back, cache resynced, 3 objects`) {
		t.Errorf("after it came back: %q", got)
	}
	if got := h.statusLines(); len(got) != 1 || strings.Contains(got[0], "gone since") {
		t.Errorf("status after it came back: %q", got)
	}
}

// A 410 after the server was unreachable is an apiserver that restarted
// (its watch cache starts afresh): said so, without an alarming "410 Gone".
func TestHealthSaysTheAPIServerRestarted(t *testing.T) {
	clock := newFakeClock("10:00:00")
	h := newHealth(testHost, nil, clock.now)
	h.failure("pods", refused("pods"))
	_ = h.takeNotes()
	clock.advance(5 * time.Second)
	h.failure("pods", gone("pods"))
	got := h.takeNotes()
	want := []string{"10:00:05 reconnected to https://127.0.0.1:6443 after 5s",
		"10:00:05 pods: the apiserver restarted and no longer has the cache's version; relisting now"}
	if !slices.Equal(got, want) {
		t.Errorf("said\n%q\nwant\n%q", got, want)
	}
	if s := strings.Join(h.statusLines(), "\n"); strings.Contains(s, "410") || !strings.Contains(s, "relisting now") {
		t.Errorf("status %q, want relisting now, without 410", s)
	}
	// Without an outage before it, it is a version the server compacted.
	h2 := newHealth(testHost, nil, clock.now)
	h2.failure("pods", gone("pods"))
	if got := h2.takeNotes(); len(got) != 1 || strings.Contains(got[0], "410") || !strings.Contains(got[0], "no longer has the cache's version") {
		t.Errorf("said %q", got)
	}
}

// Every cache resynced in the last minute stays in the status area, not
// the last three.
func TestHealthStatusKeepsEveryResync(t *testing.T) {
	clock := newFakeClock("10:00:00")
	h := newHealth(testHost, nil, clock.now)
	names := []string{"a", "b", "c", "d", "e"}
	for _, n := range names {
		h.failure(n, refused(n))
	}
	clock.advance(time.Second)
	for i, n := range names {
		h.listed(n, i+1)
	}
	st := strings.Join(h.statusLines(), "\n")
	for _, n := range names {
		if !strings.Contains(st, " "+n+": cache resynced") {
			t.Errorf("status lacks %s's resync:\n%s", n, st)
		}
	}
}
