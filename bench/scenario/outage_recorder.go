package scenario

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// watchRecorder records what the apiserver sees of one client process:
// when each request was sent, when each succeeded (a 2xx answer), and
// when each watch of a namespace was answered 200 (the response headers
// arrived: the watch is open). Both sides of the outage-recovery scenario
// install it the same way, with rest.Config.Wrap, so "watching again" is
// detected identically on both.
//
// A watchRecorder is safe for concurrent use; its zero value is not (make
// one with newWatchRecorder).
type watchRecorder struct {
	// changed has capacity 1 and receives a value (if it has room) after
	// every recorded watch answer; the outage child waits on it. Never
	// closed.
	changed chan struct{}

	// mu guards sent, succeeded and watches.
	mu sync.Mutex
	// sent holds the time of every request, in the order sent.
	sent []time.Time
	// succeeded holds the time of every 2xx response, in order.
	succeeded []time.Time
	// watches holds, per namespace, the times its watches were answered.
	watches map[string][]time.Time
}

func newWatchRecorder() *watchRecorder {
	return &watchRecorder{changed: make(chan struct{}, 1), watches: map[string][]time.Time{}}
}

// wrap is a rest.Config WrapTransport: it puts a recording transport in
// front of next. Every transport it wraps records into r.
func (r *watchRecorder) wrap(next http.RoundTripper) http.RoundTripper {
	return &recordingTransport{rec: r, next: next}
}

// recordingTransport is one transport wrapped by watchRecorder.wrap.
type recordingTransport struct {
	rec  *watchRecorder
	next http.RoundTripper
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.rec.request(time.Now())
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	now := time.Now()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		t.rec.success(now)
	}
	if resp.StatusCode == http.StatusOK {
		if ns, ok := watchedNamespace(req.URL); ok {
			t.rec.watching(ns, now)
		}
	}
	return resp, err
}

// WrappedRoundTripper lets client-go's utilnet.CloseIdleConnectionsFor
// (which kube.Factory.Shutdown and client-go's factories call) reach the
// transport underneath.
func (t *recordingTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (r *watchRecorder) request(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, at)
}

func (r *watchRecorder) success(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.succeeded = append(r.succeeded, at)
}

func (r *watchRecorder) watching(ns string, at time.Time) {
	r.mu.Lock()
	r.watches[ns] = append(r.watches[ns], at)
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// backSince returns, for each of namespaces whose watch was answered at or
// after t, the first such answer.
func (r *watchRecorder) backSince(t time.Time, namespaces []string) map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(namespaces))
	for _, ns := range namespaces {
		for _, at := range r.watches[ns] {
			if !at.Before(t) {
				out[ns] = at
				break
			}
		}
	}
	return out
}

// firstSuccess returns the first success at or after t; false if none.
func (r *watchRecorder) firstSuccess(t time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, at := range r.succeeded {
		if !at.Before(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// requests counts the requests sent in [from, to).
func (r *watchRecorder) requests(from, to time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return countIn(r.sent, from, to)
}

// countIn counts the times of ts in [from, to).
func countIn(ts []time.Time, from, to time.Time) int {
	n := 0
	for _, t := range ts {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// watchedNamespace returns the namespace a watch request (watch=true in
// its query) of a namespaced resource is for: the segment after
// "namespaces" in /api/v1/namespaces/NS/configmaps and the like. A request
// that is not a watch, or of no namespace (including a watch of namespace
// objects themselves), returns false.
func watchedNamespace(u *url.URL) (string, bool) {
	if w := u.Query().Get("watch"); w != "true" && w != "1" {
		return "", false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "namespaces" && parts[i+1] != "" {
			return parts[i+1], true
		}
	}
	return "", false
}

// recoveryTimes returns when, relative to ready, the first and the last of
// back watched again. back must not be empty.
func recoveryTimes(ready time.Time, back map[string]time.Time) (first, last time.Duration) {
	started := false
	for _, at := range back {
		d := at.Sub(ready)
		if !started {
			first, last, started = d, d, true
			continue
		}
		first, last = min(first, d), max(last, d)
	}
	return first, last
}
