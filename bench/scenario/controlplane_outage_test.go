package scenario

import (
	"bufio"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestWatchedNamespaceFindsTheNamespaceOfAWatch(t *testing.T) {
	for _, c := range []struct {
		url    string
		ns     string
		wantOK bool
	}{
		{"https://h/api/v1/namespaces/outage-3/configmaps?watch=true&resourceVersion=12", "outage-3", true},
		{"https://h/api/v1/namespaces/a/configmaps?watch=1", "a", true},
		{"https://h/apis/apps/v1/namespaces/b/deployments?allowWatchBookmarks=true&watch=true", "b", true},
		{"https://h/api/v1/namespaces/a/configmaps?watch=true&sendInitialEvents=true", "a", true},
		{"https://h/api/v1/namespaces/a/configmaps", "", false},                 // a list
		{"https://h/api/v1/namespaces/a/configmaps?watch=false", "", false},     // a list
		{"https://h/api/v1/configmaps?watch=true", "", false},                   // every namespace
		{"https://h/api/v1/namespaces?watch=true&fieldSelector=x", "", false},   // namespaces themselves
		{"https://h/api/v1/namespaces/a?watch=true", "", false},                 // one namespace object
		{"https://h/readyz", "", false},                                         // the probe
		{"https://h/api/v1/namespaces//configmaps?watch=true", "", false},       // no name
		{"https://h/api/v1/namespaces/a/configmaps/cm-0?watch=true", "a", true}, // one object
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		ns, ok := watchedNamespace(u)
		if ns != c.ns || ok != c.wantOK {
			t.Errorf("watchedNamespace(%s) = %q, %v; want %q, %v", c.url, ns, ok, c.ns, c.wantOK)
		}
	}
}

// statusTransport answers every request with the status its path names
// (…/s200, …/s500) or, for "/refused", an error.
type statusTransport struct{}

func (statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case strings.Contains(req.URL.Path, "refused"):
		return nil, &url.Error{Op: "Get", URL: req.URL.String(), Err: http.ErrServerClosed}
	case strings.HasSuffix(req.URL.Path, "s500"):
		return &http.Response{StatusCode: http.StatusInternalServerError, Body: http.NoBody}, nil
	}
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

func TestWatchRecorderCountsRequestsAndAnsweredWatchesOnly(t *testing.T) {
	rec := newWatchRecorder()
	rt := rec.wrap(statusTransport{})
	get := func(u string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := rt.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	before := time.Now()
	get("https://h/api/v1/namespaces/c/refused?watch=true") // not answered
	get("https://h/api/v1/namespaces/b/s500?watch=true")    // answered, no success
	if at, ok := rec.firstSuccess(before); ok {
		t.Errorf("firstSuccess = %v after a refusal and a 500 only", at)
	}
	get("https://h/api/v1/namespaces/a/s200?watch=true")
	succeeded, ok := rec.firstSuccess(before)
	if !ok || succeeded.Before(before) {
		t.Errorf("firstSuccess = %v, %v after a 200; want the 200's time", succeeded, ok)
	}
	select {
	case <-rec.changed:
	default:
		t.Error("an answered watch did not signal changed")
	}
	get("https://h/api/v1/namespaces/d/s200")            // a list
	get("https://h/api/v1/namespaces/a/s200?watch=true") // a again: the first counts
	get("https://h/readyz")                              // a request, no watch
	back := rec.backSince(before, []string{"a", "b", "c", "d"})
	if len(back) != 1 || back["a"].IsZero() {
		t.Errorf("backSince = %v, want only a", back)
	}
	if got := rec.backSince(time.Now().Add(time.Second), []string{"a"}); len(got) != 0 {
		t.Errorf("backSince(later) = %v, want none", got)
	}
	if n := rec.requests(before, time.Now().Add(time.Nanosecond)); n != 6 {
		t.Errorf("requests = %d, want 6 (failed ones included)", n)
	}
	if got, _ := rec.firstSuccess(before); !got.Equal(succeeded) {
		t.Errorf("firstSuccess moved from %v to %v", succeeded, got)
	}
	if n := rec.requests(time.Now().Add(time.Second), time.Now().Add(2*time.Second)); n != 0 {
		t.Errorf("requests in a later second = %d, want 0", n)
	}
	if w, ok := rt.(interface{ WrappedRoundTripper() http.RoundTripper }); !ok || w.WrappedRoundTripper() != (statusTransport{}) {
		t.Error("the recording transport does not unwrap to the one it wraps")
	}
}

func TestCountInIsHalfOpen(t *testing.T) {
	t0 := time.Unix(100, 0)
	ts := []time.Time{t0.Add(-time.Nanosecond), t0, t0.Add(999 * time.Millisecond), t0.Add(time.Second)}
	if n := countIn(ts, t0, t0.Add(time.Second)); n != 2 {
		t.Errorf("countIn = %d, want 2 ([from, to))", n)
	}
}

func TestOutageLinesRoundTripAndRejectGarbage(t *testing.T) {
	at := time.Unix(1_790_000_000, 123456789)
	for _, kind := range []string{outageDown, outageReady} {
		got, gotAt, err := parseOutageLine(strings.TrimSpace(formatOutageLine(kind, at)))
		if err != nil || got != kind || !gotAt.Equal(at) {
			t.Errorf("round trip of %s: %q, %v, %v", kind, got, gotAt, err)
		}
	}
	for _, bad := range []string{"", "ready", "ready x", "ready -5", "ready 0", "up 123", "ready 1 2", "synced"} {
		if _, _, err := parseOutageLine(bad); err == nil {
			t.Errorf("parseOutageLine(%q) accepted", bad)
		}
	}
	lines := bufio.NewScanner(strings.NewReader(formatOutageLine(outageReady, at)))
	if _, err := readOutageLine(lines, outageDown); err == nil {
		t.Error("readOutageLine took ready for down")
	}
	if _, err := readOutageLine(lines, outageReady); err == nil {
		t.Error("readOutageLine read past the end")
	}
}

func TestRecoveryTimesAreFirstAndLastRelativeToReadiness(t *testing.T) {
	ready := time.Unix(100, 0)
	first, last := recoveryTimes(ready, map[string]time.Time{
		"a": ready.Add(-200 * time.Millisecond),
		"b": ready.Add(1500 * time.Millisecond),
		"c": ready.Add(300 * time.Millisecond),
	})
	if first != -200*time.Millisecond || last != 1500*time.Millisecond {
		t.Errorf("recoveryTimes = %v, %v; want -200ms, 1.5s", first, last)
	}
}

func TestOutageReportsCountNegativeRecoveryAsZeroInTheRatio(t *testing.T) {
	ours := []OutageResult{
		{RecoverySeconds: -0.1, FirstSeconds: -0.3, CPUSeconds: 0.2, FirstSecondRequests: 12, OutageRequests: 150, SuccessSecondRequests: 9},
		{RecoverySeconds: -0.05, FirstSeconds: -0.2, CPUSeconds: 0.3, FirstSecondRequests: 11, OutageRequests: 140},
		{RecoverySeconds: 1.2, FirstSeconds: 0.4, CPUSeconds: 0.25, FirstSecondRequests: 13, OutageRequests: 160},
	}
	clientGo := []OutageResult{
		{RecoverySeconds: 20, CPUSeconds: 0.1},
		{RecoverySeconds: 30, CPUSeconds: 0.1},
		{RecoverySeconds: 25, CPUSeconds: 0.1, FirstSecondRequests: 1},
	}
	reports := outageReports(ours, clientGo)
	if len(reports) != 2 {
		t.Fatalf("%d reports, want 2", len(reports))
	}
	rec, req := reports[0], reports[1]
	if rec.Name != "outage-recovery" || rec.Target != "<=0.2" || rec.Unit != "s" {
		t.Errorf("recovery line %s %s %s", rec.Name, rec.Target, rec.Unit)
	}
	if rec.Ours.Median != -0.05 || rec.ClientGo.Median != 25 {
		t.Errorf("medians %v, %v; want -0.05 (reported as is), 25", rec.Ours.Median, rec.ClientGo.Median)
	}
	if rec.Ratio != 0 || !rec.Met {
		t.Errorf("ratio %v met %v, want 0 (a negative median counts as 0), met", rec.Ratio, rec.Met)
	}
	if math.Abs(rec.CPURatio-2.5) > 1e-9 || rec.OursCPU.Max != 0.3 {
		t.Errorf("CPU ratio %v, ours max %v; want 2.5, 0.3", rec.CPURatio, rec.OursCPU.Max)
	}
	if d := rec.Detail["ours-first-back-s"]; d.Min != -0.3 || d.Max != 0.4 {
		t.Errorf("first back %+v", d)
	}
	if req.Name != "outage-first-second-requests" || req.Target != "" || !req.Met {
		t.Errorf("requests line %s target %q met %v; want no target", req.Name, req.Target, req.Met)
	}
	if req.Ours.Median != 12 || req.ClientGo.Median != 0 || req.Ratio != 12 {
		t.Errorf("requests %v/%v ratio %v; want 12/0, ratio 12 (divided by at least 1)", req.Ours.Median, req.ClientGo.Median, req.Ratio)
	}
	if d := req.Detail["ours-outage-requests"]; d.Median != 150 {
		t.Errorf("outage requests %+v", d)
	}
	if d := req.Detail["ours-first-success-second"]; d.Max != 9 || d.Median != 0 {
		t.Errorf("first success's second %+v", d)
	}
}

func TestRecoveryRatio(t *testing.T) {
	for _, c := range []struct{ ours, clientGo, want float64 }{
		{1, 20, 0.05},
		{-0.5, 20, 0},
		{4, 20, 0.2},
		{0.5, 0, 500},    // client-go under 1 ms: 1 ms
		{0.5, -0.2, 500}, // also back before readiness
		{-1, -1, 0},
	} {
		if got := recoveryRatio(c.ours, c.clientGo); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("recoveryRatio(%v, %v) = %v, want %v", c.ours, c.clientGo, got, c.want)
		}
	}
}
