package table

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
)

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// tableJSON is a Table as the apiserver sends it for configmaps, with
// rows of (name, data count, age) and each row's object as given (a JSON
// value, "null" for none).
func tableJSON(rv string, withColumns bool, rows ...[2]string) string {
	cols := "null"
	if withColumns {
		cols = `[{"name":"Name","type":"string","format":"name","description":"Name must be unique","priority":0},
			{"name":"Data","type":"string","format":"","description":"Data contains","priority":0},
			{"name":"Age","type":"string","format":"","description":"CreationTimestamp","priority":0}]`
	}
	var rs []string
	for _, r := range rows {
		rs = append(rs, fmt.Sprintf(`{"cells":[%q,2,"5m"],"object":%s}`, r[0], r[1]))
	}
	return fmt.Sprintf(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":%q},"columnDefinitions":%s,"rows":[%s]}`,
		rv, cols, strings.Join(rs, ","))
}

func partial(ns, name, rv string) string {
	return fmt.Sprintf(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":%q,"namespace":%q,"resourceVersion":%q,"labels":{"a":"b"},"managedFields":[{"manager":"m"}]}}`, name, ns, rv)
}

func TestDecodeTableKeysRowsByMetadataOrByNameCell(t *testing.T) {
	s := &Source{gvr: configmaps, namespace: "web"}
	got, err := s.decodeBody([]byte(tableJSON("42", true, [2]string{"a", partial("other", "a", "7")}, [2]string{"b", "null"})))
	if err != nil {
		t.Fatal(err)
	}
	if got.resourceVersion != "42" || len(got.rows) != 2 {
		t.Fatalf("decoded %+v", got)
	}
	a, b := got.rows[0], got.rows[1]
	if a.Namespace != "other" || a.Name != "a" || a.ResourceVersion != "7" || a.Object != nil {
		t.Errorf("row with metadata: %+v", a)
	}
	if b.Namespace != "web" || b.Name != "b" || b.ResourceVersion != "" {
		t.Errorf("row without an object is keyed by its name cell and the source's namespace: %+v", b)
	}
	if n, ok := a.Cells[1].(json.Number); !ok || n != "2" {
		t.Errorf("numeric cell %#v, want json.Number 2", a.Cells[1])
	}
	cols := s.Columns()
	if len(cols) != 3 || cols[0].Format != "name" || cols[1].Description != "" {
		t.Errorf("columns %+v (descriptions dropped)", cols)
	}
	// A watch event's table has no columns: the last ones stay.
	if _, err := s.decodeBody([]byte(tableJSON("43", false, [2]string{"c", "null"}))); err != nil || len(s.Columns()) != 3 {
		t.Errorf("columns lost by a table without any: %v", err)
	}
}

func TestDecodeTableKeepsObjectsForSortingWithoutManagedFields(t *testing.T) {
	s := &Source{gvr: configmaps, keepObject: true}
	got, err := s.decodeBody([]byte(tableJSON("1", true, [2]string{"a", partial("web", "a", "7")})))
	if err != nil {
		t.Fatal(err)
	}
	md, _ := got.rows[0].Object["metadata"].(map[string]any)
	if md["resourceVersion"] != "7" || md["managedFields"] != nil {
		t.Errorf("kept metadata %v", md)
	}
}

func TestDecodeTableFallsBackToPlainObjects(t *testing.T) {
	s := &Source{gvr: configmaps}
	body := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"next"},
		"items":[{"metadata":{"name":"a","namespace":"web","resourceVersion":"3","creationTimestamp":"2020-01-01T00:00:00Z"}}]}`
	got, err := s.decodeBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got.resourceVersion != "9" || got.cont != "next" || len(got.rows) != 1 {
		t.Fatalf("decoded %+v", got)
	}
	r := got.rows[0]
	if r.Name != "a" || r.Namespace != "web" || r.ResourceVersion != "3" || r.Cells[0] != "a" || !strings.Contains(r.Cells[1].(string), "y") {
		t.Errorf("row %+v, want name a and an age in years", r)
	}
	if cols := s.Columns(); len(cols) != 2 || cols[0].Name != "Name" || cols[1].Name != "Age" {
		t.Errorf("columns %+v, want kubectl's NAME and AGE", cols)
	}
	if _, err := s.decodeBody([]byte("{not json")); !errors.Is(err, kube.ErrMalformed) {
		t.Errorf("malformed body: %v", err)
	}
}

// fakeTableServer serves handler and returns a rest.Config for it; the
// server and its connections are closed at the end of the test.
func fakeTableServer(t *testing.T, handler http.HandlerFunc) *rest.Config {
	t.Helper()
	srv := httptest.NewServer(handler)
	cfg := &rest.Config{Host: srv.URL}
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		if c, err := rest.HTTPClientFor(cfg); err == nil {
			utilnet.CloseIdleConnectionsFor(c.Transport)
		}
	})
	return cfg
}

func TestTableSourceListsAndWatchesOverHTTP(t *testing.T) {
	var mu sync.Mutex
	var queries []string
	query := func(i int) string {
		mu.Lock()
		defer mu.Unlock()
		return queries[i]
	}
	cfg := fakeTableServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		if !strings.Contains(r.Header.Get("Accept"), "as=Table;v=v1;g=meta.k8s.io") {
			http.Error(w, "no table asked for", http.StatusBadRequest)
			return
		}
		if r.URL.Query().Get("watch") != "true" {
			io.WriteString(w, tableJSON("10", true, [2]string{"a", partial("web", "a", "5")}))
			return
		}
		events := []string{
			`{"type":"ADDED","object":` + tableJSON("11", true, [2]string{"b", partial("web", "b", "11")}) + `}`,
			`{"type":"MODIFIED","object":` + tableJSON("12", false, [2]string{"b", partial("web", "b", "12")}) + `}`,
			`{"type":"BOOKMARK","object":` + tableJSON("13", false) + `}`,
			`{"type":"DELETED","object":` + tableJSON("14", false, [2]string{"a", "null"}) + `}`,
			`{"object":` + tableJSON("15", false, [2]string{"c", partial("web", "c", "15")}) + `,"type":"ADDED"}`,
			`{"type":"MODIFIED","object":{"kind":"Table","rows":"not rows"}}`,
			`{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"plain","namespace":"web","resourceVersion":"16"}}}`,
			`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old"}}`,
		}
		for _, e := range events {
			io.WriteString(w, e+"\n")
		}
	})
	src, err := New(cfg, Options{Source: kube.SourceOptions{Resource: kube.Resource{GVR: configmaps}, Selection: kube.Selection{Namespace: "web", LabelSelector: "app=x"}}, Include: IncludeMetadata})
	if err != nil {
		t.Fatal(err)
	}
	page, err := src.List(t.Context(), listwatch.Options{Limit: 500, ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Name != "a" || page.ResourceVersion != "10" {
		t.Errorf("page %+v", page)
	}
	if q := query(0); !strings.Contains(q, "includeObject=Metadata") || !strings.Contains(q, "limit=500") || !strings.Contains(q, "labelSelector=app%3Dx") {
		t.Errorf("list query %q", q)
	}
	w, err := src.Watch(t.Context(), listwatch.Options{ResourceVersion: "10", AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var got []string
	for {
		ev, err := w.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, listwatch.ErrWrongType) {
			got = append(got, "skipped")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == listwatch.Error {
			if !errors.Is(ev.Err, listwatch.ErrExpired) || !apierrors.IsResourceExpired(ev.Err) {
				t.Errorf("ERROR event: %v, want ErrExpired with the server's status", ev.Err)
			}
			got = append(got, "ERROR")
			continue
		}
		got = append(got, fmt.Sprintf("%s %s@%s", ev.Type, ev.Object.GetName(), ev.ResourceVersion))
	}
	want := "ADDED b@11,MODIFIED b@12,BOOKMARK @13,DELETED a@14,ADDED c@15,skipped,ADDED plain@16,ERROR"
	if g := strings.Join(got, ","); g != want {
		t.Errorf("events %s, want %s", g, want)
	}
	if q := query(1); !strings.Contains(q, "watch=true") || !strings.Contains(q, "allowWatchBookmarks=true") || !strings.Contains(q, "resourceVersion=10") {
		t.Errorf("watch query %q", q)
	}
}

func TestTableSourceMapsServerErrors(t *testing.T) {
	code := http.StatusGone
	cfg := fakeTableServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d,"message":"nope"}`,
			map[int]string{http.StatusGone: "Expired", http.StatusForbidden: "Forbidden"}[code], code)
	})
	src, err := New(cfg, Options{Source: kube.SourceOptions{Resource: kube.Resource{GVR: configmaps}}, Include: IncludeNone})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.List(t.Context(), listwatch.Options{}); !errors.Is(err, listwatch.ErrExpired) {
		t.Errorf("list answered 410: %v, want ErrExpired", err)
	}
	if _, err := src.Watch(t.Context(), listwatch.Options{}); !errors.Is(err, listwatch.ErrExpired) {
		t.Errorf("watch answered 410: %v, want ErrExpired", err)
	}
	code = http.StatusForbidden
	if _, err := src.Watch(t.Context(), listwatch.Options{}); !apierrors.IsForbidden(err) {
		t.Errorf("watch answered 403: %v, want the server's Forbidden status", err)
	}
}

// podTableJSON is a Table of n pods as the apiserver sends it with
// includeObject=Metadata: each row's object is the pod's metadata, labels,
// annotations, owner and managedFields included (most of the bytes).
func podTableJSON(n int) []byte {
	fields := `{"f:metadata":{"f:annotations":{".":{},"f:checksum/config":{}},"f:labels":{".":{},"f:app":{},"f:tier":{}},` +
		`"f:ownerReferences":{".":{},"k:{\"uid\":\"00000000-0000-4000-8000-000000000001\"}":{}}},` +
		`"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},` +
		`"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}`
	var rows []string
	for i := range n {
		name := fmt.Sprintf("app-%06d", i)
		obj := fmt.Sprintf(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":%q,"namespace":"ns-%d",`+
			`"uid":"4423938c-1482-48b3-bc78-af07f7b5%04d","resourceVersion":"%d","creationTimestamp":"2026-11-23T19:58:54Z",`+
			`"labels":{"app":"app","tier":"frontend"},"annotations":{"checksum/config":"0000"},`+
			`"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"app","uid":"00000000-0000-4000-8000-000000000001","controller":true}],`+
			`"managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-23T19:58:54Z","fieldsType":"FieldsV1","fieldsV1":%s}]}}`,
			name, i%100, i%10000, 1000+i, fields)
		rows = append(rows, fmt.Sprintf(`{"cells":[%q,"1/1","Running",0,"15m","10.0.0.1","node-0","<none>","<none>"],"object":%s}`, name, obj))
	}
	return []byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"99999"},"columnDefinitions":[` +
		`{"name":"Name","type":"string","format":"name"},{"name":"Ready","type":"string"},{"name":"Status","type":"string"},` +
		`{"name":"Restarts","type":"integer"},{"name":"Age","type":"string"},{"name":"IP","type":"string","priority":1},` +
		`{"name":"Node","type":"string","priority":1},{"name":"Nominated Node","type":"string","priority":1},` +
		`{"name":"Readiness Gates","type":"string","priority":1}],"rows":[` + strings.Join(rows, ",") + `]}`)
}

func TestDecodeBodyOfManyRows(t *testing.T) {
	s := &Source{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}
	got, err := s.decodeBody(podTableJSON(50))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.rows) != 50 || got.rows[7].Name != "app-000007" || got.rows[7].Namespace != "ns-7" || got.rows[7].ResourceVersion != "1007" || len(got.rows[7].Cells) != 9 {
		t.Errorf("rows: %d, row 7 %+v", len(got.rows), got.rows[7])
	}
}

// BenchmarkDecodeTable decodes a page of 500 pods as a Table with their
// metadata: one pass into the rows' structs (what the source does), against
// decoding metav1.Table and then each row's object, the plain way.
func BenchmarkDecodeTable(b *testing.B) {
	body := podTableJSON(500)
	b.Run("one-pass", func(b *testing.B) {
		s := &Source{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := s.decodeBody(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("table-then-objects", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var t metav1.Table
			if err := json.Unmarshal(body, &t); err != nil {
				b.Fatal(err)
			}
			for _, r := range t.Rows {
				var m metav1.PartialObjectMetadata
				if err := json.Unmarshal(r.Object.Raw, &m); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestShardedTableSourceSendsTheSelectorAndFilters: with a shard the table
// source asks the server for it, and shard.Filter drops the rows outside it
// when the server sends them anyway (a server without ShardedListAndWatch).
func TestShardedTableSourceSendsTheSelectorAndFilters(t *testing.T) {
	set, err := shard.ParseSet("uid:0/2")
	if err != nil {
		t.Fatal(err)
	}
	// Rows whose uid hashes into the shard and out of it.
	var in, out []string
	for i := 0; len(in) < 3 || len(out) < 3; i++ {
		uid := fmt.Sprintf("uid-%d", i)
		if set.ContainsHash(shard.Hash(uid)) {
			in = append(in, uid)
		} else {
			out = append(out, uid)
		}
	}
	var query string
	cfg := fakeTableServer(t, func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.RawQuery
		var rows [][2]string
		for _, uid := range append(in[:3:3], out[:3]...) {
			rows = append(rows, [2]string{uid, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"web","uid":%q,"resourceVersion":"5"}}`, uid, uid)})
		}
		io.WriteString(w, tableJSON("10", true, rows...))
	})
	opts := kube.SourceOptions{Resource: kube.Resource{GVR: configmaps, Namespaced: true},
		Selection: kube.Selection{Namespace: "web", Shard: set}}
	s, err := New(cfg, Options{Source: opts, Include: IncludeMetadata})
	if err != nil {
		t.Fatal(err)
	}
	src := shard.Filter[*Row](s, set)
	page, err := src.List(t.Context(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Items {
		got = append(got, r.GetName())
	}
	if strings.Join(got, ",") != strings.Join(in[:3], ",") {
		t.Errorf("rows %v, want those in the shard, %v", got, in[:3])
	}
	if !strings.Contains(query, "shardSelector=") || !strings.Contains(query, "includeObject=Metadata") {
		t.Errorf("query %q lacks the shard selector or the rows' metadata", query)
	}
}

// A list whose items (or a Table whose rows) are null or absent is an
// empty list with its version, as apimachinery reads it, not one nameless
// object.
func TestDecodeTableReadsNullOrAbsentItemsAsEmpty(t *testing.T) {
	for _, body := range []string{
		`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":null}`,
		`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"}}`,
		`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`,
		`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"rows":null}`,
		`{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"}}`,
	} {
		for _, keep := range []bool{false, true} {
			s := &Source{gvr: configmaps, keepObject: keep}
			got, err := s.decodeBody([]byte(body))
			if err != nil || got.resourceVersion != "5" || len(got.rows) != 0 {
				t.Errorf("%s (keep %v): %d rows, version %q, %v; want no rows at version 5", body, keep, len(got.rows), got.resourceVersion, err)
			}
		}
	}
}
