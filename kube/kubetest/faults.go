package kubetest

import (
	"fmt"
	"net"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/listwatch"
)

// Faults. Each plays back something a kube-apiserver, or the network in
// front of it, does to its clients; none loses a change silently, so a
// client that follows the list-and-watch rules converges on the server's
// objects.
//
// RefuseNext, RefuseFor, UnavailableNext and UnavailableFor aim at requests
// still to come, of any kind (discovery, /readyz and writes included); a
// refusal wins over unavailability. ResetWatches, CloseWatches and
// ExpireWatches aim at open watches, of every resource; with no watch open
// to take one, the server holds it, and the next watch opened takes it just
// after its initial events (listwatch/fake's rule), so a test may fire a
// fault while its informer is between watches and still see it played.

// requestFault is what happens to one request.
type requestFault int

const (
	faultNone requestFault = iota
	faultRefuse
	faultUnavailable
)

// requestFaults are the faults aimed at requests still to come; guarded by
// Server.mu.
type requestFaults struct {
	refuseNext, unavailableNext   int
	refuseUntil, unavailableUntil time.Time
	// keepAlivesOff: keep-alives are off while refusals are due (see
	// RefuseNext).
	keepAlivesOff bool
}

// takeLocked returns the fault for a request arriving now and counts it.
func (f *requestFaults) takeLocked(now time.Time) requestFault {
	switch {
	case f.refuseNext > 0:
		f.refuseNext--
		return faultRefuse
	case now.Before(f.refuseUntil):
		return faultRefuse
	case f.unavailableNext > 0:
		f.unavailableNext--
		return faultUnavailable
	case now.Before(f.unavailableUntil):
		return faultUnavailable
	}
	return faultNone
}

// RefuseNext makes the server refuse the next n requests: each one's
// connection is reset (TCP RST) before any answer, so the client sees a
// transport error, "connection reset by peer", which kinformer and
// client-go treat as the server being unreachable, as they treat
// "connection refused". While refusals are due the server turns HTTP
// keep-alives off, so every request comes on a new connection and Go's
// transport does not retry a refused one behind the client's back.
// client-go's clientsets do retry a refused GET, up to ten times a second
// apart: one fails only when eleven refusals are due (kinformer's sources
// never retry). RefuseNext(0) cancels the refusals still due.
func (s *Server) RefuseNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.refuseNext = n
	s.keepAlivesLocked(n <= 0 && !s.clock.Now().Before(s.faults.refuseUntil))
}

// RefuseFor makes the server refuse every request for d, measured on
// Options.Clock, as RefuseNext refuses them. RefuseFor(0) ends a refusal.
func (s *Server) RefuseFor(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.refuseUntil = s.clock.Now().Add(d)
	s.keepAlivesLocked(d <= 0 && s.faults.refuseNext <= 0)
}

// keepAlivesLocked turns HTTP keep-alives on or off; off closes the idle
// connections. s.mu is held.
func (s *Server) keepAlivesLocked(on bool) {
	if s.closed || on != s.faults.keepAlivesOff {
		return
	}
	s.faults.keepAlivesOff = !on
	s.http.Config.SetKeepAlivesEnabled(on)
}

// refusalsOverLocked turns keep-alives back on once no refusal is due.
// s.mu is held.
func (s *Server) refusalsOverLocked(now time.Time) {
	if s.faults.keepAlivesOff && s.faults.refuseNext <= 0 && !now.Before(s.faults.refuseUntil) {
		s.keepAlivesLocked(true)
	}
}

// UnavailableNext makes the server answer the next n requests with 503
// Service Unavailable, "apiserver is shutting down", as a kube-apiserver
// does while it stops (without Retry-After, so client-go's clients do not
// retry on their own).
func (s *Server) UnavailableNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.unavailableNext = n
}

// UnavailableFor makes the server answer every request with 503 for d,
// measured on Options.Clock, as UnavailableNext does. UnavailableFor(0)
// ends it. A refusal due wins over unavailability.
func (s *Server) UnavailableFor(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.unavailableUntil = s.clock.Now().Add(d)
}

func shuttingDown() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusServiceUnavailable,
		Reason: metav1.StatusReasonServiceUnavailable, Message: "apiserver is shutting down",
	}}
}

// resetConnection resets the connection of the request w answers: the
// client reads "connection reset by peer", whatever was sent before.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // closes the connection, without RST
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with RST
	}
	_ = conn.Close()
}

// ResetWatches breaks every open watch as a reset connection does: events
// not yet sent are lost and the client reads "connection reset by peer".
// A client watches again from the last version it read. With no watch
// open, the next watch opened is reset, after its initial events (so a
// test may fire it while its informer is between watches); the same holds
// for CloseWatches and ExpireWatches.
func (s *Server) ResetWatches() { s.store.ResetWatches() }

// CloseWatches ends every open watch cleanly, as the apiserver does when a
// watch's timeout passes: events not yet sent are lost and the stream ends
// at a frame boundary. A client watches again from the last version it
// read.
func (s *Server) CloseWatches() { s.store.CloseWatches() }

// ExpireWatches ends every open watch with an ERROR event carrying 410
// Expired ("too old resource version"), after the events already queued,
// as the apiserver does when a watcher falls too far behind. A client
// lists again.
func (s *Server) ExpireWatches() {
	s.store.SendError(fmt.Errorf("watch ended by ExpireWatches: %w", listwatch.ErrExpired))
}

// DropBookmarks, while drop is true, keeps every bookmark from the server's
// watches (those Bookmark sends), but the one ending a streaming list's
// initial events, without which such a list never ends.
func (s *Server) DropBookmarks(drop bool) { s.dropBookmarks.Store(drop) }

// Bookmark sends a bookmark at the current resource version on every open
// watch that asked for bookmarks (allowWatchBookmarks=true). The server
// sends none on its own but the one ending a streaming list, where
// kube-apiserver sends one about every minute: an informer waiting for a
// version written to another resource (informer.Shared's
// WaitForResourceVersion) reaches it at the next Bookmark.
func (s *Server) Bookmark() { s.store.Bookmark() }

// Compact forgets all history, as etcd's compaction does: from now on, a
// list at an exact older version, a continue token of an older list and a
// watch from an older version answer 410 Expired (the watch as an ERROR
// event, as the apiserver sends it). Open watches are not affected.
func (s *Server) Compact() { s.store.Compact() }
