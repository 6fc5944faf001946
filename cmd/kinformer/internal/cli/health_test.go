package cli

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/listwatch"
)

// fakeClock is a settable clock for health.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newFakeClock starts at hms on the day of testNow.
func newFakeClock(hms string) *fakeClock {
	t, err := time.Parse("15:04:05", hms)
	if err != nil {
		panic(err)
	}
	return &fakeClock{t: time.Date(2026, 11, 21, t.Hour(), t.Minute(), t.Second(), 0, time.UTC)}
}

// reflectorErr is err as a reflector reports it.
func reflectorErr(name string, phase listwatch.Phase, err error) error {
	return fmt.Errorf("%s: %w", name, &listwatch.PhaseError{Phase: phase, Err: err})
}

const testHost = "https://127.0.0.1:6443"

// refused is what a watch of a stopped apiserver reports.
func refused(name string) error {
	dial := &url.Error{Op: "Get", URL: testHost + "/api/v1/pods?watch=true&resourceVersion=4711",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	return reflectorErr(name, listwatch.PhaseWatchStart, fmt.Errorf("watch from %q: %w: %w", "4711", listwatch.ErrUnavailable, dial))
}

func gone(name string) error {
	return reflectorErr(name, listwatch.PhaseWatchStream, fmt.Errorf("error event: %w: %w", listwatch.ErrExpired,
		apierrors.NewResourceExpired("too old resource version: 4711 (5020)")))
}

func TestHealthSaysOnceThatTheServerIsUnreachableThenThatItCameBack(t *testing.T) {
	clock := newFakeClock("19:02:11")
	h := newHealth(testHost, nil, clock.now)
	// Both informers lose the server; their reflectors retry with growing
	// back-off, each retry failing the same way.
	for i, d := range []time.Duration{800 * time.Millisecond, 1200 * time.Millisecond, 4 * time.Second, 6 * time.Second} {
		for _, name := range []string{"pods", "configmaps"} {
			h.failure(name, refused(name))
			h.backoff(name, d)
		}
		got := h.takeNotes()
		if i == 0 {
			want := []string{"19:02:11 server https://127.0.0.1:6443 unreachable (connection refused); next try in 800ms"}
			if !slices.Equal(got, want) {
				t.Fatalf("first failure said\n%q\nwant\n%q", got, want)
			}
		} else if len(got) != 0 {
			t.Fatalf("retry %d said %q again", i, got)
		}
		clock.advance(d)
	}
	if got, want := h.statusLines(), []string{
		"server https://127.0.0.1:6443 unreachable since 19:02:11 (12s): connection refused · retrying",
	}; !slices.Equal(got, want) {
		t.Errorf("status\n%q\nwant\n%q", got, want)
	}
	h.failure("pods", refused("pods"))
	h.backoff("pods", 30*time.Second)
	if got, want := h.statusLines()[0], "server https://127.0.0.1:6443 unreachable since 19:02:11 (12s): connection refused · next try in 30s, at 19:02:53"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}

	// After a minute, one reminder; the next one only two minutes later.
	clock.advance(50 * time.Second)
	h.backoff("configmaps", 50*time.Millisecond) // "in 0s" says nothing: it is being retried
	if got := h.takeNotes(); len(got) != 1 || got[0] != "19:03:13 server https://127.0.0.1:6443 still unreachable, for 1m2s (connection refused); retrying" {
		t.Errorf("reminder %q", got)
	}
	clock.advance(time.Minute)
	if got := h.takeNotes(); len(got) != 0 {
		t.Errorf("second reminder after one more minute: %q", got)
	}

	// The server is back: the watches open, the server has compacted past
	// their versions (410), the caches are listed again after a back-off.
	clock.advance(36 * time.Second) // 19:04:49
	h.watching("pods")
	h.failure("pods", gone("pods"))
	h.backoff("pods", 52*time.Second)
	h.watching("configmaps")
	h.failure("configmaps", gone("configmaps"))
	h.backoff("configmaps", 52*time.Second)
	want := []string{
		"19:04:49 reconnected to https://127.0.0.1:6443 after 2m38s",
		"19:04:49 pods, configmaps: the apiserver restarted and no longer has the cache's version; relisting in 52s, at 19:05:41",
	}
	if got := h.takeNotes(); !slices.Equal(got, want) {
		t.Errorf("recovery said\n%q\nwant\n%q", got, want)
	}
	if got, want := h.statusLines(), []string{
		"configmaps, pods: the server no longer has the cache's version · relisting in 52s, at 19:05:41",
		"19:04:49 reconnected to https://127.0.0.1:6443 after 2m38s",
	}; !slices.Equal(got, want) {
		t.Errorf("status\n%q\nwant\n%q", got, want)
	}
	clock.advance(52 * time.Second)
	h.listed("pods", 150)
	h.listed("configmaps", 90)
	want = []string{"19:05:41 pods: cache resynced, 150 objects", "19:05:41 configmaps: cache resynced, 90 objects"}
	if got := h.takeNotes(); !slices.Equal(got, want) {
		t.Errorf("resync said\n%q\nwant\n%q", got, want)
	}
	if got := h.conditions(); len(got) != 0 {
		t.Errorf("conditions after recovery: %q", got)
	}
	// A minute later the status area is empty again.
	clock.advance(recentNotes + time.Second)
	if got := h.statusLines(); len(got) != 0 {
		t.Errorf("status a minute later: %q", got)
	}
}

func TestHealthWatchResumedAfterOutageSaysOnlyReconnected(t *testing.T) {
	clock := newFakeClock("10:00:00")
	h := newHealth(testHost, nil, clock.now)
	h.failure("pods", refused("pods"))
	h.backoff("pods", time.Second)
	h.takeNotes()
	clock.advance(48 * time.Second)
	h.watching("pods")
	h.listed("pods", 3) // a later relist for another reason is not a resync after the outage
	if got, want := h.takeNotes(), []string{"10:00:48 reconnected to https://127.0.0.1:6443 after 48s"}; !slices.Equal(got, want) {
		t.Errorf("said %q, want %q", got, want)
	}
}

func TestHealthReportsOtherFailuresOnceAndTheirEnd(t *testing.T) {
	clock := newFakeClock("08:00:00")
	h := newHealth(testHost, nil, clock.now)
	forbidden := reflectorErr("pods", listwatch.PhaseList, fmt.Errorf("list at %q: %w", "", apierrors.NewForbidden(
		schema.GroupResource{Resource: "pods"}, "", errors.New(`User "bob" cannot list resource "pods"`))))
	h.failure("pods", forbidden)
	h.backoff("pods", 10*time.Second)
	if got := h.takeNotes(); len(got) != 0 {
		t.Errorf("told at once: %q", got)
	}
	if got := h.statusLines(); len(got) != 0 {
		t.Errorf("shown at once: %q", got)
	}
	clock.advance(failGrace)
	want := []string{`08:00:00 pods: list failed: pods is forbidden: User "bob" cannot list resource "pods"; next try in 7s`}
	if got := h.takeNotes(); !slices.Equal(got, want) {
		t.Errorf("said\n%q\nwant\n%q", got, want)
	}
	want = []string{`pods: list failing since 08:00:00: pods is forbidden: User "bob" cannot list resource "pods" · next try in 7s`}
	if got := h.statusLines(); !slices.Equal(got, want) {
		t.Errorf("status\n%q\nwant\n%q", got, want)
	}
	clock.advance(7 * time.Second)
	h.failure("pods", forbidden) // the same again: nothing new
	if got := h.takeNotes(); len(got) != 0 {
		t.Errorf("repeated: %q", got)
	}
	clock.advance(5 * time.Second)
	h.listed("pods", 10)
	if got, want := h.takeNotes(), []string{"08:00:15 pods: working again after 15s"}; !slices.Equal(got, want) {
		t.Errorf("said %q, want %q", got, want)
	}

	// A failure that clears within failGrace is not worth telling: a
	// server shutting down closes its watches before it refuses
	// connections, which the outage note then explains.
	h.failure("pods", reflectorErr("pods", listwatch.PhaseWatchStream, errors.New("very short watch")))
	clock.advance(time.Second)
	if got := h.takeNotes(); len(got) != 0 {
		t.Errorf("a failure one second old said %q", got)
	}
	h.failure("pods", refused("pods"))
	clock.advance(failGrace)
	if got := h.takeNotes(); len(got) != 1 || !strings.Contains(got[0], "unreachable") {
		t.Errorf("the blip before the outage: %q", got)
	}
}

func TestHealthSaysWhenInformersStillInBackoffTryAgain(t *testing.T) {
	clock := newFakeClock("20:07:39")
	h := newHealth(testHost, nil, clock.now)
	h.failure("pods", refused("pods"))
	h.backoff("pods", 30*time.Second)
	h.failure("configmaps", refused("configmaps"))
	h.backoff("configmaps", 5*time.Second)
	h.takeNotes()
	clock.advance(6 * time.Second)
	h.watching("configmaps")
	want := []string{
		"20:07:45 reconnected to https://127.0.0.1:6443 after 6s",
		"20:07:45 pods: still in back-off from the outage; next try in 24s, at 20:08:09",
	}
	if got := h.takeNotes(); !slices.Equal(got, want) {
		t.Errorf("said\n%q\nwant\n%q", got, want)
	}
	if got, want := h.conditions(), []string{"pods: in back-off from the outage · next try in 24s, at 20:08:09"}; !slices.Equal(got, want) {
		t.Errorf("conditions %q, want %q", got, want)
	}
	clock.advance(24 * time.Second)
	h.watching("pods")
	if got, want := h.takeNotes(), []string{"20:08:09 pods: watching again, nothing missed"}; !slices.Equal(got, want) {
		t.Errorf("said %q, want %q", got, want)
	}
	// One object is one object.
	h.failure("pods", gone("pods"))
	h.listed("pods", 1)
	if got := h.takeNotes(); len(got) != 2 || !strings.HasSuffix(got[1], "pods: cache resynced, 1 object") {
		t.Errorf("said %q", got)
	}
}

func TestHealthFoldsRepeatedWarnings(t *testing.T) {
	clock := newFakeClock("08:00:00")
	h := newHealth(testHost, nil, clock.now)
	for range 5 {
		h.failure("widgets.example.dev", &informer.HandlerPanicError{Handler: "kinformer-cli", Value: "boom"})
	}
	want := []string{"08:00:00 widgets.example.dev: handler panicked: boom (4 more like it)"}
	if got := h.takeNotes(); !slices.Equal(got, want) {
		t.Errorf("said %q, want %q", got, want)
	}
}

func TestHealthPrintsUnlessHeld(t *testing.T) {
	var out strings.Builder
	clock := newFakeClock("08:00:00")
	h := newHealth(testHost, &out, clock.now)
	release := h.hold()
	h.failure("pods", refused("pods"))
	h.print()
	if out.Len() != 0 {
		t.Errorf("printed while held: %q", out.String())
	}
	release()
	h.print()
	if !strings.Contains(out.String(), "unreachable (connection refused)") {
		t.Errorf("printed %q", out.String())
	}
}

func TestRoundDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		830 * time.Millisecond: "800ms", 48*time.Second + 400*time.Millisecond: "48s", 100 * time.Second: "1m40s",
		2 * time.Minute: "2m", 90*time.Minute + 20*time.Second: "1h30m",
	} {
		if got := roundDuration(d); got != want {
			t.Errorf("roundDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestMergeNames(t *testing.T) {
	got := mergeNames([]string{
		"10:00:00 pods: x", "10:00:00 configmaps -n a: x", "10:00:01 secrets: x", "server a: b", "server c: b", "pods: y",
	})
	want := []string{"10:00:00 pods, configmaps -n a: x", "10:00:01 secrets: x", "server a: b", "server c: b", "pods: y"}
	if !slices.Equal(got, want) {
		t.Errorf("merged\n%q\nwant\n%q", got, want)
	}
}

// The outage's cause shown is the latest one: a server first says it is
// shutting down, then refuses connections, and the condition says so.
func TestHealthShowsTheLatestCauseOfAnOutage(t *testing.T) {
	clock := newFakeClock("19:02:11")
	h := newHealth(testHost, nil, clock.now)
	h.failure("pods", reflectorErr("pods", listwatch.PhaseWatchStart, fmt.Errorf("%w: %w", listwatch.ErrUnavailable,
		apierrors.NewServiceUnavailable("apiserver is shutting down"))))
	if c := strings.Join(h.conditions(), "\n"); !strings.Contains(c, "shutting down") {
		t.Fatalf("conditions %q do not say the server is shutting down", c)
	}
	clock.advance(2 * time.Second)
	h.failure("pods", refused("pods"))
	c := strings.Join(h.conditions(), "\n")
	if !strings.Contains(c, "connection refused") || strings.Contains(c, "shutting down") {
		t.Fatalf("conditions %q, want the latest cause (connection refused) alone", c)
	}
	if !strings.Contains(c, "since 19:02:11") {
		t.Errorf("conditions %q lost when the outage began", c)
	}
	if n := len(h.takeNotes()); n != 1 {
		t.Errorf("%d notes, want the outage told once", n)
	}
}
