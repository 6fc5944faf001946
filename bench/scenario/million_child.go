package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/kube"
)

// What the million scenario (controlplane_million.go) adds to the memory
// children: a metadata-only side, progress lines while a long sync runs,
// and a memory cap for the sides that cannot hold a million objects on
// this machine.

// MemOursMeta is kinformer's metadata-only informer of the kind:
// kube.Informer[*metav1.PartialObjectMetadata] of a factory with default
// options (managedFields kept, as any metadata client receives them).
const MemOursMeta Side = "mem-ours-meta"

// Environment of a memory child in the million scenario.
const (
	// ChildCapMBEnv, when set, is the RSS in MB past which a memory child
	// stops its sync and reports how far it got (MemResult.Capped).
	ChildCapMBEnv = "KINFORMER_BENCH_CHILD_CAP_MB"
	// ChildProgressEnv, when set, makes a memory child print a progress
	// line to standard error at this interval (a Go duration): objects
	// in, bytes received, rate, ETA, RSS.
	ChildProgressEnv = "KINFORMER_BENCH_CHILD_PROGRESS"
	// ChildExpectBytesEnv, when set, is how many bytes the child's sync
	// is expected to read (the floor's, for a side making the same
	// request): the ETA of a progress line before objects are counted.
	ChildExpectBytesEnv = "KINFORMER_BENCH_CHILD_EXPECT_BYTES"
)

// syncTimeout is how long a child waits for a sync of n objects: 10
// minutes, and 10 more per 100,000 objects past 100,000 (a million
// objects from etcd take this machine minutes).
func syncTimeout(n int) time.Duration {
	return 10*time.Minute + time.Duration(max(n-100_000, 0)/100_000)*10*time.Minute
}

// startMeta starts kinformer's metadata-only informer of every object of res.
func startMeta(ctx context.Context, cfg *rest.Config, res kube.Resource, added func()) (memInformer, error) {
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{})
	if err != nil {
		return memInformer{}, err
	}
	type meta = *metav1.PartialObjectMetadata
	inf, _, err := kube.Informer(ctx, f, kube.InformerOptions[meta]{
		Resource: res,
		Indexers: cache.Indexers[meta]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[meta]},
	})
	if err != nil {
		f.Shutdown()
		return memInformer{}, err
	}
	return startOurs(ctx, f, inf, added)
}

// capWatch follows a memory child's sync on a goroutine of its own: every
// 100 ms it reads the process's RSS and, past the cap, closes capped; at
// the progress interval it prints how many objects have come in. Both
// are off unless their environment variable is set.
type capWatch struct {
	side  Side
	want  int
	start time.Time
	capKB int64
	every time.Duration
	// received counts objects that came in before the handler sees them
	// (the floor's reads, client-go's transform); seen, when set, the
	// handler's adds; bytes what the client read from the server (a
	// kinformer informer hands its handler the initial list only once it
	// is all in, so until then bytes are the progress).
	received atomic.Int64
	seen     *atomic.Int64
	bytes    atomic.Int64
	expect   int64
	// capped is closed by the goroutine when the RSS passed the cap.
	capped chan struct{}
	// quit is closed by stop; done when the goroutine has returned.
	quit, done chan struct{}
	stopped    bool
}

// startCapWatch starts the watch of a child syncing want objects of side
// since start, configured by ChildCapMBEnv and ChildProgressEnv.
func startCapWatch(side Side, want int, start time.Time) (*capWatch, error) {
	w := &capWatch{side: side, want: want, start: start,
		capped: make(chan struct{}), quit: make(chan struct{}), done: make(chan struct{})}
	if v := os.Getenv(ChildCapMBEnv); v != "" {
		mb, err := strconv.ParseInt(v, 10, 64)
		if err != nil || mb <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive number of MB", ChildCapMBEnv, v)
		}
		w.capKB = mb << 10
	}
	if v := os.Getenv(ChildProgressEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive duration", ChildProgressEnv, v)
		}
		w.every = d
	}
	if v := os.Getenv(ChildExpectBytesEnv); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s=%q: want a positive number of bytes", ChildExpectBytesEnv, v)
		}
		w.expect = n
	}
	if w.capKB == 0 && w.every == 0 {
		close(w.done)
		return w, nil
	}
	go w.run() // Exits when stop closes quit, or once capped.
	return w, nil
}

// counter returns the function client-go's transform calls per object,
// or nil when nobody reads the count (the transform is then left out).
func (w *capWatch) counter() func() {
	if w.capKB == 0 && w.every == 0 {
		return nil
	}
	return func() { w.received.Add(1) }
}

// count is how many objects have come in so far, at most want.
func (w *capWatch) count() int64 {
	n := w.received.Load()
	if w.seen != nil {
		n = max(n, w.seen.Load())
	}
	return min(n, int64(w.want))
}

func (w *capWatch) run() {
	defer close(w.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	next := w.start.Add(w.every)
	status, err := openStatusFile() // read without garbage (see statusFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "  %s: no RSS to watch: %v\n", w.side, err)
		return
	}
	defer status.close()
	for {
		select {
		case <-w.quit:
			return
		case now := <-tick.C:
			rss, _ := status.kb("VmRSS")
			if w.capKB > 0 && rss > w.capKB {
				close(w.capped)
				return
			}
			if w.every > 0 && !now.Before(next) {
				next = now.Add(w.every)
				fmt.Fprintln(os.Stderr, w.progress(now.Sub(w.start), rss))
			}
		}
	}
}

// progressLine says how far a sync of want objects is after elapsed.
func progressLine(what string, n int64, want int, elapsed time.Duration, rssKB int64) string {
	rate := float64(n) / elapsed.Seconds()
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(int64(want)-n)/rate) * time.Second).Round(time.Second).String()
	}
	line := fmt.Sprintf("  %s: %d/%d objects (%.0f%%), %.0f/s, ETA %s", what, n, want, 100*float64(n)/float64(max(want, 1)), rate, eta)
	if rssKB > 0 {
		line += fmt.Sprintf(", RSS %.0f MB", float64(rssKB)/1024)
	}
	return line
}

// progress is the progress line of a child after elapsed: objects in,
// with their ETA, once any are counted; before that the bytes read, with
// an ETA against the expected bytes when known.
func (w *capWatch) progress(elapsed time.Duration, rssKB int64) string {
	read := float64(w.bytes.Load())
	if n := w.count(); n > 0 || read == 0 {
		return fmt.Sprintf("%s, %.0f MB read", progressLine(string(w.side), n, w.want, elapsed, rssKB), read/1e6)
	}
	rate := read / elapsed.Seconds()
	line := fmt.Sprintf("  %s: %.0f MB read, %.1f MB/s", w.side, read/1e6, rate/1e6)
	if w.expect > 0 && rate > 0 {
		left := max(float64(w.expect)-read, 0) / rate
		line += fmt.Sprintf(" (%.0f%% of %.0f MB), ETA %v", 100*read/float64(w.expect), float64(w.expect)/1e6,
			(time.Duration(left) * time.Second).Round(time.Second))
	}
	return line + fmt.Sprintf(", no objects in the cache yet, RSS %.0f MB", float64(rssKB)/1024)
}

// wrap makes cfg's clients count what they read into w.bytes, when a
// progress line will show it.
func (w *capWatch) wrap(cfg *rest.Config) {
	if w.every == 0 {
		return
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &w.bytes} })
}

// countingTransport counts the bytes of every response body into n.
type countingTransport struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

// WrappedRoundTripper lets client-go reach the transport underneath (to
// close its idle connections; it warns about a wrapper it cannot see
// through).
func (t countingTransport) WrappedRoundTripper() http.RoundTripper { return t.rt }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{resp.Body, t.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// stop ends the watch and waits for its goroutine. Safe to call twice
// (from one goroutine).
func (w *capWatch) stop() {
	if !w.stopped {
		w.stopped = true
		close(w.quit)
	}
	<-w.done
}

// cappedResult writes the result of a sync stopped at the cap: res with
// what came in until now, the live heap of the last collection (a full
// collection now would take seconds of a heap this size while the
// informer keeps filling it) and the memory reached.
func (w *capWatch) cappedResult(res MemResult, cpu func() time.Duration, out io.Writer) error {
	res.Capped = true
	res.Millis, res.CPUSeconds = sinceMillis(w.start), cpu().Seconds()
	res.Objects = int(w.count())
	how := ""
	if res.Objects == 0 && w.expect > 0 {
		// A kinformer informer holding the initial list before its handler
		// sees it: the objects read so far, from the bytes.
		res.Objects = int(min(w.bytes.Load()*int64(w.want)/w.expect, int64(w.want)))
		res.ObjectsFromBytes = true
		how = " (from the bytes read)"
	}
	res.HeapAfter = readHeapLive()
	res.PeakRSSKB, _ = readStatusKB("/proc/self/status", "VmHWM")
	fmt.Fprintf(os.Stderr, "  %s: stopped at the cap, %.0f MB RSS, %d of %d objects%s in %.0f s\n",
		w.side, float64(res.PeakRSSKB)/1024, res.Objects, w.want, how, res.Millis/1e3)
	return json.NewEncoder(out).Encode(res)
}
