package e2e_test

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/testenv"
)

// streamProxy is a loopback HTTP proxy in front of the apiserver that
// misbehaves the way real ones do: it can drop the bookmark that ends a
// streaming list, and hold a watch open while forwarding nothing. Clients
// speak plain HTTP to it; it adds the apiserver's TLS and credentials.
// Watches go through as JSON (it asks the apiserver for JSON) so that it
// can read their events; everything else passes untouched.
type streamProxy struct {
	srv       *httptest.Server
	upstream  *url.URL
	transport http.RoundTripper

	// dropInitialEventsEnd drops every bookmark annotated
	// k8s.io/initial-events-end.
	dropInitialEventsEnd atomic.Bool
	// stallWatches is how many more watches (streaming lists included) to
	// stall: after their initial events, if any, they forward nothing
	// until the client goes away.
	stallWatches atomic.Int32

	mu      sync.Mutex // guards dropped, stalled
	dropped int        // initial-events-end bookmarks dropped
	stalled int        // watches stalled
}

func newStreamProxy(t *testing.T) *streamProxy {
	t.Helper()
	cfg := env.RESTConfig()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	up, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &streamProxy{upstream: up, transport: rt}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
		closeIdle(cfg)
	})
	return p
}

// config is a rest.Config that reaches the apiserver through the proxy.
func (p *streamProxy) config() *rest.Config {
	return &rest.Config{Host: p.srv.URL, QPS: -1}
}

func (p *streamProxy) serve(w http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host, out.Host = p.upstream.Scheme, p.upstream.Host, p.upstream.Host
	watch := r.URL.Query().Get("watch") == "true"
	if watch {
		out.Header.Set("Accept", "application/json")
	}
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	maps.Copy(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	if !watch || resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	p.relay(w, r, resp.Body)
}

// watchEvent is what the proxy reads of a JSON watch event.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"object"`
}

// relay forwards a watch's events one by one, as the proxy's faults say.
func (p *streamProxy) relay(w http.ResponseWriter, r *http.Request, body io.Reader) {
	flusher := w.(http.Flusher)
	flusher.Flush()
	initial := r.URL.Query().Get("sendInitialEvents") == "true"
	stall := p.stallWatches.Add(-1) >= 0
	if stall && !initial {
		p.silence(r)
		return
	}
	dec := json.NewDecoder(body)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return
		}
		var ev watchEvent
		_ = json.Unmarshal(raw, &ev)
		end := ev.Type == "BOOKMARK" && ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true"
		if end && p.dropInitialEventsEnd.Load() {
			p.mu.Lock()
			p.dropped++
			p.mu.Unlock()
			continue
		}
		if _, err := w.Write(append(raw, '\n')); err != nil {
			return
		}
		flusher.Flush()
		if end && stall {
			p.silence(r)
			return
		}
	}
}

// silence holds a watch open, forwarding nothing, until the client goes
// away: the apiserver's own end of it closes at its timeout, unseen.
func (p *streamProxy) silence(r *http.Request) {
	p.mu.Lock()
	p.stalled++
	p.mu.Unlock()
	<-r.Context().Done()
}

func (p *streamProxy) counts() (dropped, stalled int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped, p.stalled
}

// proxiedPods returns a factory reaching the apiserver through p, and its
// informer of the pods of ns.
func proxiedPods(t *testing.T, p *streamProxy, ns string, errs *errorLog, lw reflector.Settings) (*kube.Factory, *informer.Shared[*corev1.Pod]) {
	t.Helper()
	f, err := kube.NewFactory(p.config(), kube.FactoryOptions{ErrorHandler: errs.handle, Settings: lw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Shutdown)
	inf, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*corev1.Pod]{Selection: kube.Selection{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	return f, inf
}

// errorsMatching returns the logged errors matching target.
func errorsMatching(errs *errorLog, target error) []error {
	var out []error
	for _, err := range errs.all() {
		if errors.Is(err, target) {
			out = append(out, err)
		}
	}
	return out
}

// A proxy that drops the bookmark ending a streaming list would hang an
// informer forever; kinformer gives the stream up once it has been silent
// (no initial event) for InitialEventsTimeout, lists in pages instead,
// syncs, and says so (an error, and Progress's fallback count and reason).
func TestStreamingListWithoutItsEndBookmarkFallsBackToPagedList(t *testing.T) {
	ns := namespace(t, "dropbookmark")
	if err := env.CreatePods(t.Context(), ns, 30, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	p := newStreamProxy(t)
	p.dropInitialEventsEnd.Store(true)
	errs := &errorLog{}
	f, inf := proxiedPods(t, p, ns, errs, reflector.Settings{InitialEventsTimeout: 3 * time.Second})
	startAndSync(t, f, errs)
	requireCacheMatches(t, inf.Cache(), listPods(ns, metav1.ListOptions{}))

	if dropped, _ := p.counts(); dropped == 0 {
		t.Fatal("the proxy dropped no bookmark: the test tested nothing")
	}
	if got := errorsMatching(errs, reflector.ErrInitialEventsTimeout); len(got) != 1 {
		t.Fatalf("timeouts reported: %v; all errors: %v", got, errs.all())
	}
	pr := inf.Progress()
	if pr.Fallbacks != 1 || !strings.Contains(pr.LastFallback, "initial-events-end") ||
		pr.Mode != reflector.ListPaged || pr.Objects != 30 || pr.Bytes == 0 || pr.Pages != 1 {
		t.Fatalf("progress %+v, want one fallback to a paged list of 30 pods", pr)
	}
}

// A proxy that keeps a watch open but forwards nothing would leave the
// cache silently stale; kinformer closes a watch silent past its timeout
// plus the bookmark interval and watches again, and the change made
// meanwhile reaches the cache.
func TestStalledWatchIsRestarted(t *testing.T) {
	ns := namespace(t, "stall")
	if err := env.CreatePods(t.Context(), ns, 5, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	p := newStreamProxy(t)
	p.stallWatches.Store(1) // the streaming list's stream, once its initial events are through
	errs := &errorLog{}
	lw := reflector.Settings{MinWatchTimeout: 2 * time.Second, MaxWatchTimeout: 2 * time.Second, BookmarkInterval: time.Second}
	f, inf := proxiedPods(t, p, ns, errs, lw)
	startAndSync(t, f, errs)
	if err := env.CreatePods(t.Context(), ns, 1, testenv.BulkOptions{NamePrefix: "late-"}); err != nil {
		t.Fatal(err)
	}
	requireCacheMatches(t, inf.Cache(), listPods(ns, metav1.ListOptions{}))

	if _, stalled := p.counts(); stalled != 1 {
		t.Fatalf("the proxy stalled %d watches, want 1", stalled)
	}
	if got := errorsMatching(errs, reflector.ErrWatchStalled); len(got) != 1 {
		t.Fatalf("stalls reported: %v; all errors: %v", got, errs.all())
	}
	if pr := inf.Progress(); pr.StalledWatches != 1 || pr.Relist {
		t.Fatalf("progress %+v, want one stalled watch and no relist", pr)
	}
}
