package scenario

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/diff"
)

func TestProgressLineSaysCountRateAndETA(t *testing.T) {
	got := progressLine("seeding", 250, 1000, 10*time.Second, 2048)
	for _, want := range []string{"seeding: 250/1000 objects (25%)", "25/s", "ETA 30s", "RSS 2 MB"} {
		if !strings.Contains(got, want) {
			t.Errorf("progressLine = %q, want it to contain %q", got, want)
		}
	}
	if got := progressLine("x", 0, 10, time.Second, 0); !strings.Contains(got, "ETA ?") || strings.Contains(got, "RSS") {
		t.Errorf("progressLine with nothing in and no RSS = %q, want ETA ? and no RSS", got)
	}
}

func TestCheckResourcesRefusesWhatTheMachineCannotHold(t *testing.T) {
	err := checkResources(podKind, 1<<40, 1024)
	if !errors.Is(err, ErrShortOfResources) {
		t.Fatalf("checkResources(2^40 pods) = %v, want ErrShortOfResources", err)
	}
	for _, want := range []string{"free memory", "free disk", "lower -pods"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := checkResources(replicaSetKind, 1, 1); err != nil {
		t.Errorf("checkResources(1 pod) = %v, want nil", err)
	}
}

func TestMillionNeedsGrowWithPodsAndCap(t *testing.T) {
	m1, d1 := millionNeeds(podKind, 100_000, 1024)
	m2, d2 := millionNeeds(podKind, 1_000_000, 1024)
	m3, _ := millionNeeds(podKind, 1_000_000, 8192)
	if m2 <= m1 || d2 <= d1 || m3 <= m2 {
		t.Errorf("needs: 100k %d/%d, 1M %d/%d, 1M with a bigger cap %d: want growth", m1, d1, m2, d2, m3)
	}
}

func TestCountingTransportCountsResponseBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 12345)))
	}))
	defer srv.Close()
	var n atomic.Int64
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: countingTransport{tr, &n}}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n.Load() != 12345 {
		t.Errorf("counted %d bytes, want 12345", n.Load())
	}
}

func TestMillionReportsSayWhichSidesDidNotFit(t *testing.T) {
	run := func(objects int, millis, heapPerPod float64, rssMB int64, capped bool) MemResult {
		return MemResult{Objects: objects, Millis: millis, CPUSeconds: millis / 1000, HeapBefore: 0,
			HeapAfter: uint64(heapPerPod * float64(objects)), PeakRSSKB: rssMB << 10, Capped: capped, Bytes: 5400 * int64(objects)}
	}
	runs := memoryRuns{}
	for range 3 {
		runs[MemFloor] = append(runs[MemFloor], run(1000, 100, 0, 30, false))
		view := run(1000, 120, 900, 800, false)
		view.Relist = &RelistResult{SteadyRSSKB: 800 << 10, PeakRSSKB: 900 << 10, SteadyHeap: 100, PeakHeap: 110, Objects: 1000}
		runs[MemOursView] = append(runs[MemOursView], view)
		runs[MemOursMeta] = append(runs[MemOursMeta], run(1000, 150, 5000, 900, false))
		runs[MemOurs] = append(runs[MemOurs], run(300, 90, 13000, 4096, true))
		runs[MemClientGo] = append(runs[MemClientGo], run(250, 80, 14000, 4096, true))
		runs[MemClientGoNoMF] = append(runs[MemClientGoNoMF], run(400, 85, 10000, 4096, true))
	}
	byName := map[string]Report{}
	for _, r := range append(curveReports(runs, 1000), millionReports(runs, 4096)...) {
		byName[r.Name] = r
	}
	heap := byName["million-heap-per-object-view"]
	if heap.Ours.Median != 900 || heap.ClientGo.Median != 14000 || !heap.Met || !strings.Contains(heap.Note, "clientgo did not fit") {
		t.Errorf("million-heap-per-object-view = %+v, want 900 against 14000, met, client-go marked as not fitting", heap)
	}
	if rss := byName["million-rss-view"]; rss.Target != "<=1000MB" || !rss.Met {
		t.Errorf("million-rss-view target %q met %v, want <=1000MB met (800 MB)", rss.Target, rss.Met)
	}
	if full := byName["million-sync-time-full"]; full.Target != "" || !strings.Contains(full.Note, "full did not fit") {
		t.Errorf("million-sync-time-full = target %q note %q, want no target and a note that it did not fit", full.Target, full.Note)
	}
	if view := byName["million-sync-time-view"]; view.Target != "<=1.3" || view.Ratio != 1.2 || !view.Met {
		t.Errorf("million-sync-time-view = target %q ratio %v met %v, want <=1.3, 1.2, met", view.Target, view.Ratio, view.Met)
	}
	if relist := byName["million-relist-peak-view"]; relist.Ours.Median != 900.0/800 || !relist.Met {
		t.Errorf("million-relist-peak-view ours=%v met %v, want 1.125 met", relist.Ours.Median, relist.Met)
	}
	curve := byName["curve-heap-per-object-1000"]
	if _, ok := curve.Detail["clientgo-capped-runs"]; !ok || curve.Detail["metadata-b-per-object"].Median != 5000 {
		t.Errorf("curve-heap-per-object-1000 detail = %v, want every side and client-go's capped runs", curve.Detail)
	}
	for _, name := range []string{"million-sync-cpu-view", "million-sync-time-clientgo-nomf", "curve-rss-1000"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no %s line", name)
		}
	}
}

func TestMillionReportsOfTheViewAloneLeaveOutTheOtherSidesLines(t *testing.T) {
	runs := memoryRuns{}
	for range 3 {
		view := MemResult{Objects: 1000, Millis: 120, CPUSeconds: 0.1, HeapAfter: 900_000, PeakRSSKB: 1200 << 10, AllocBytes: 2_000_000}
		view.Relist = &RelistResult{SteadyRSSKB: 800 << 10, PeakRSSKB: 1100 << 10, Objects: 1000, AllocBytes: 300_000}
		runs[MemOursView] = append(runs[MemOursView], view)
	}
	var names []string
	byName := map[string]Report{}
	for _, r := range millionReports(runs, 4096) {
		names = append(names, r.Name)
		byName[r.Name] = r
	}
	if want := []string{"million-rss-view", "million-relist-peak-view"}; !slices.Equal(names, want) {
		t.Fatalf("lines %v, want %v", names, want)
	}
	rss := byName["million-rss-view"]
	if rss.ClientGo.Median != viewRSSLimitMB || rss.Ratio != 1.2 || rss.Met || rss.Detail["alloc-b-per-object"].Median != 2000 {
		t.Errorf("million-rss-view = %+v, want 1200 MB against the 1000 MB bound (1.2, missed), 2000 B allocated per object", rss)
	}
	if relist := byName["million-relist-peak-view"]; relist.Detail["alloc-b-per-object"].Median != 300 || relist.Met {
		t.Errorf("million-relist-peak-view = %+v, want 300 B allocated per object, missed (1.375)", relist)
	}
}

func TestMillionSidesNamedKeepsTheScenarioOrder(t *testing.T) {
	got, err := millionSidesNamed([]string{"view", "floor"})
	if err != nil || !slices.Equal(got, []Side{MemFloor, MemOursView}) {
		t.Errorf("millionSidesNamed(view, floor) = %v, %v; want floor, view", got, err)
	}
	if _, err := millionSidesNamed([]string{"views"}); err == nil || !strings.Contains(err.Error(), `"views"`) {
		t.Errorf("millionSidesNamed(views) error %v, want one naming it", err)
	}
	if all, err := millionSidesNamed(nil); err != nil || len(all) != len(millionSides()) {
		t.Errorf("millionSidesNamed(nil) = %v, %v; want every side", all, err)
	}
}

func TestAMillionReplicaSetsNeedLessThanAMillionPods(t *testing.T) {
	rs, _ := millionNeeds(replicaSetKind, 1_000_000, 4096)
	pods, _ := millionNeeds(podKind, 1_000_000, 4096)
	if rs >= pods {
		t.Errorf("a million ReplicaSets need %d bytes, pods %d: the apiserver keeps no ReplicaSet, want less", rs, pods)
	}
	err := checkResources(podKind, 1<<40, 1024)
	if err == nil || !strings.Contains(err.Error(), "informer of its own") {
		t.Errorf("checkResources(pods) = %v, want it to say the apiserver keeps every pod", err)
	}
	if err := checkResources(replicaSetKind, 1<<40, 1024); err == nil || strings.Contains(err.Error(), "informer of its own") {
		t.Errorf("checkResources(replicasets) = %v, want a refusal that does not blame the apiserver's informer", err)
	}
}

func TestKindNamedRefusesAnUnknownKindNamingTheKnownOnes(t *testing.T) {
	if k, err := kindNamed("replicasets"); err != nil || k != replicaSetKind {
		t.Errorf("kindNamed(replicasets) = %v, %v", k, err)
	}
	_, err := kindNamed("deployments")
	if err == nil || !strings.Contains(err.Error(), "pods") || !strings.Contains(err.Error(), "replicasets") {
		t.Errorf("kindNamed(deployments) = %v, want an error naming pods and replicasets", err)
	}
	if got := replicaSetKind.path(); strings.Join(got, "/") != "apis/apps/v1/replicasets" {
		t.Errorf("replicasets path = %v", got)
	}
	if got := podKind.path(); strings.Join(got, "/") != "api/v1/pods" {
		t.Errorf("pods path = %v", got)
	}
}

// An object written into etcd from its app's template is the one the
// apiserver would have stored: object i in every field but managedFields,
// which are the template's with i's owner.
func TestStoredReplicaSetIsItsOwnFromItsAppsTemplate(t *testing.T) {
	const i = 5*sidecarTemplates + 3
	tmpl := sidecarReplicaSet(3)
	tmpl.ResourceVersion = "42"
	tmpl.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: replicaSetManager, Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(
			`{"f:metadata":{"f:ownerReferences":{"k:{\"uid\":\"` + string(tmpl.OwnerReferences[0].UID) + `\"}":{}}}}`)}}}
	got := storedSidecarReplicaSet(tmpl, i)
	want := sidecarReplicaSet(i)
	if len(got.ManagedFields) != 1 {
		t.Fatalf("managedFields %v, want the template's entry", got.ManagedFields)
	}
	mf := string(got.ManagedFields[0].FieldsV1.Raw)
	if !strings.Contains(mf, string(want.OwnerReferences[0].UID)) || strings.Contains(mf, string(tmpl.OwnerReferences[0].UID)) {
		t.Errorf("managedFields %s, want them to key the owner %s, not the template's", mf, want.OwnerReferences[0].UID)
	}
	want.ManagedFields = got.ManagedFields
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("stored ReplicaSet %d differs from sidecarReplicaSet(%d):\n%s", i, i, diff.Diff(want, got))
	}
	sel, err := metav1.LabelSelectorAsSelector(got.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(got.Spec.Template.Labels)) {
		t.Errorf("selector %v does not select the template's labels %v (%v)", got.Spec.Selector, got.Spec.Template.Labels, err)
	}
	if sidecarReplicaSet(1).Name == sidecarReplicaSet(1+sidecarTemplates).Name {
		t.Error("two ReplicaSets of the same app share a name")
	}
}

func TestStoredPodIsItsOwnFromItsAppsTemplate(t *testing.T) {
	const i = 5*sidecarTemplates + 3
	tmpl := sidecarPod(3, 42)
	got := storedSidecarPod(tmpl, i)
	want := sidecarPod(i, 0)
	want.ResourceVersion = ""
	want.Status.HostIPs = []corev1.HostIP{{IP: want.Status.HostIP}}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("stored pod %d differs from sidecarPod(%d):\n%s", i, i, diff.Diff(want, got))
	}
}
