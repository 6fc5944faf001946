package kubetest_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/kubetest"
	"github.com/kinformer/kinformer/listwatch"
)

// RefuseNext resets the connections of the next n requests, of any kind;
// the clients see "connection reset by peer", which kinformer's sources
// report as ErrUnavailable; the request log shows them with code 0.
// (Not a clientset's GET: client-go retries those after a second.)
func TestRefuseNext(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{Objects: []runtime.Object{pod("ns", "a", nil)}})
	src := podSource(t, srv, kube.Selection{})
	c := ctx(t)
	if _, err := src.List(c, listwatch.Options{}); err != nil { // a kept-alive connection to reuse
		t.Fatal(err)
	}
	srv.RefuseNext(2)
	if _, err := src.List(c, listwatch.Options{}); !errors.Is(err, listwatch.ErrUnavailable) || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("refused list: %v, want ErrUnavailable and ECONNRESET", err)
	}
	if _, err := clientset(t, srv).CoreV1().Pods("ns").Create(c, pod("ns", "b", nil), metav1.CreateOptions{}); err == nil {
		t.Error("refused create: no error")
	}
	if _, err := src.List(c, listwatch.Options{}); err != nil {
		t.Errorf("list after the refusals: %v", err)
	}
	var codes []int
	for _, r := range srv.Requests() {
		codes = append(codes, r.Code)
	}
	if want := []int{200, 0, 0, 200}; !equalInts(codes, want) {
		t.Errorf("answered %v, want %v", codes, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// RefuseFor refuses every request until the server's clock has moved on;
// RefuseFor(0) ends a refusal.
func TestRefuseFor(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	srv := kubetest.New(t, kubetest.Options{Clock: clk})
	src := podSource(t, srv, kube.Selection{})
	c := ctx(t)
	srv.RefuseFor(time.Minute)
	for range 3 {
		if _, err := src.List(c, listwatch.Options{}); !errors.Is(err, listwatch.ErrUnavailable) {
			t.Fatalf("list while refused: %v, want ErrUnavailable", err)
		}
	}
	clk.Step(time.Minute)
	if _, err := src.List(c, listwatch.Options{}); err != nil {
		t.Errorf("list after the refusal: %v", err)
	}
	srv.RefuseFor(time.Hour)
	srv.RefuseFor(0)
	if _, err := src.List(c, listwatch.Options{}); err != nil {
		t.Errorf("list after RefuseFor(0): %v", err)
	}
}

// UnavailableNext and UnavailableFor answer 503 "shutting down", /readyz
// included.
func TestUnavailable(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	srv := kubetest.New(t, kubetest.Options{Clock: clk})
	src := podSource(t, srv, kube.Selection{})
	c := ctx(t)
	srv.UnavailableNext(1)
	_, err := src.List(c, listwatch.Options{})
	var status apierrors.APIStatus
	if !errors.Is(err, listwatch.ErrUnavailable) || !errors.As(err, &status) ||
		status.Status().Code != http.StatusServiceUnavailable || !strings.Contains(status.Status().Message, "shutting down") {
		t.Errorf("list while unavailable: %v, want ErrUnavailable with a 503 Status saying shutting down", err)
	}
	if _, err := src.List(c, listwatch.Options{}); err != nil {
		t.Errorf("second list: %v", err)
	}
	srv.UnavailableFor(time.Second)
	resp, err := http.Get(srv.URL() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz while unavailable: %d, want 503", resp.StatusCode)
	}
	clk.Step(time.Second)
	resp, err = http.Get(srv.URL() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz after: %d, want 200", resp.StatusCode)
	}
}

// openWatch opens a pod watch from the current version.
func openWatch(t *testing.T, srv *kubetest.Server) listwatch.Watch[*corev1.Pod] {
	t.Helper()
	w, err := podSource(t, srv, kube.Selection{}).Watch(ctx(t), listwatch.Options{ResourceVersion: srv.ResourceVersion(), AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// The faults aimed at open watches: a reset is a broken stream
// (ErrUnavailable), a close a clean end (io.EOF), an expiry an Error event
// with 410; each reaches every open watch, and one fired with no watch open
// is played on the next watch.
func TestWatchFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fire  func(*kubetest.Server)
		check func(ev listwatch.Event[*corev1.Pod], err error) bool
	}{
		{"ResetWatches", (*kubetest.Server).ResetWatches, func(_ listwatch.Event[*corev1.Pod], err error) bool {
			return errors.Is(err, listwatch.ErrUnavailable) && errors.Is(err, syscall.ECONNRESET)
		}},
		{"CloseWatches", (*kubetest.Server).CloseWatches, func(_ listwatch.Event[*corev1.Pod], err error) bool {
			return errors.Is(err, io.EOF)
		}},
		{"ExpireWatches", (*kubetest.Server).ExpireWatches, func(ev listwatch.Event[*corev1.Pod], err error) bool {
			return err == nil && ev.Type == listwatch.Error && errors.Is(ev.Err, listwatch.ErrExpired)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := kubetest.New(t, kubetest.Options{})
			w1, w2 := openWatch(t, srv), openWatch(t, srv)
			eventually(t, "two open watches", func() bool { return srv.OpenWatches() == 2 })
			if err := srv.Create(pod("ns", "a", nil)); err != nil {
				t.Fatal(err)
			}
			expectEvents(t, "first watch", w1, seen{listwatch.Added, "a", "2", false})
			tc.fire(srv)
			if ev, err := w1.Next(); !tc.check(ev, err) {
				t.Errorf("first watch after the fault: %+v, %v", ev, err)
			}
			if ev, err := w2.Next(); !tc.check(ev, err) { // its queued event is lost, or sent before the 410
				if ev.Type != listwatch.Added {
					t.Errorf("second watch after the fault: %+v, %v", ev, err)
				} else if ev, err := w2.Next(); !tc.check(ev, err) {
					t.Errorf("second watch after its event: %+v, %v", ev, err)
				}
			}
			eventually(t, "no open watch", func() bool { return srv.OpenWatches() == 0 })

			tc.fire(srv) // held for the next watch
			w3 := openWatch(t, srv)
			if ev, err := w3.Next(); !tc.check(ev, err) {
				t.Errorf("watch opened after the fault: %+v, %v", ev, err)
			}
		})
	}
}

// Bookmark sends a bookmark at the current version to watches that asked
// for them; DropBookmarks keeps them back, but not the one ending a
// streaming list.
func TestBookmarks(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	w := openWatch(t, srv)
	eventually(t, "an open watch", func() bool { return srv.OpenWatches() == 1 })
	srv.Bookmark()
	expectEvents(t, "bookmark", w, seen{listwatch.Bookmark, "", "1", false})

	srv.DropBookmarks(true)
	srv.Bookmark()
	if err := srv.Create(pod("ns", "a", nil)); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, "bookmark dropped", w, seen{listwatch.Added, "a", "2", false})
	s, err := podSource(t, srv, kube.Selection{}).Watch(ctx(t), listwatch.Options{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: listwatch.MatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expectEvents(t, "streaming list", s, seen{listwatch.Added, "a", "2", false}, seen{listwatch.Bookmark, "", "2", true})

	srv.DropBookmarks(false)
	srv.Bookmark()
	expectEvents(t, "bookmark again", w, seen{listwatch.Bookmark, "", "2", false})
}
