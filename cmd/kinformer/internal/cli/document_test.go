package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The golden files in testdata/document were captured from a v1.36
// kube-apiserver and kubectl (bench/kubectl, as make bench-cli builds it):
// *.list.json is the server's answer to a list (`kubectl get --raw`), and
// kubectl-*.json / .yaml what `kubectl get ... -o json|yaml` printed for
// the same objects. The objects carry what makes printing differ: HTML
// characters, multi-line and long strings (YAML folds them at its 80th
// column), Unicode, numbers, managedFields (kubectl leaves them out), and
// a custom resource's floats.

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "document", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pagedList answers a list request with the items of the server's list in
// file, in pages of the request's limit (all at once without one), the
// continue token being the index of the next item. Watches get an empty
// stream held open until the client leaves, so a command that watches
// after listing still syncs.
func pagedList(t *testing.T, file string) http.HandlerFunc {
	var list struct {
		Kind       string            `json:"kind"`
		APIVersion string            `json:"apiVersion"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(readGolden(t, file), &list); err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		if q.Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			if q.Get("sendInitialEvents") == "true" {
				// A streaming list: every item, then the bookmark that
				// ends the initial events.
				kind := strings.TrimSuffix(list.Kind, "List")
				for _, item := range list.Items {
					var obj map[string]any
					if err := json.Unmarshal(item, &obj); err != nil {
						panic(err)
					}
					obj["kind"], obj["apiVersion"] = kind, list.APIVersion
					_ = json.NewEncoder(w).Encode(map[string]any{"type": "ADDED", "object": obj})
				}
				_ = json.NewEncoder(w).Encode(map[string]any{"type": "BOOKMARK", "object": map[string]any{
					"kind": kind, "apiVersion": list.APIVersion, "metadata": map[string]any{
						"resourceVersion": "300", "annotations": map[string]string{"k8s.io/initial-events-end": "true"}}}})
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		from, _ := strconv.Atoi(q.Get("continue"))
		to := len(list.Items)
		if limit, _ := strconv.Atoi(q.Get("limit")); limit > 0 {
			to = min(to, from+limit)
		}
		cont := ""
		if to < len(list.Items) {
			cont = strconv.Itoa(to)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"300","continue":%q},"items":[`, list.Kind, list.APIVersion, cont)
		for i, item := range list.Items[from:to] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(item)
		}
		b.WriteString("]}\n")
		_, _ = w.Write(b.Bytes())
	}
}

// byResource routes list and watch requests by the resource in the path.
func byResource(handlers map[string]http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if h, ok := handlers[parts[len(parts)-1]]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

func TestGetJSONAndYAMLPrintAsKubectl(t *testing.T) {
	global := fakeCluster(t, byResource(map[string]http.HandlerFunc{
		"pods":       pagedList(t, "pods.list.json"),
		"configmaps": pagedList(t, "configmaps.list.json"),
	}))
	global.Namespace = "t1"
	for _, output := range []string{"json", "yaml"} {
		want := readGolden(t, "kubectl-pods-cm."+output)
		// kubectl's default page of 500, pages of 2 (continue tokens
		// between items), and one response.
		for _, chunk := range []int64{500, 2, 0} {
			var out, errOut bytes.Buffer
			err := RunGet(t.Context(), Streams{Out: &out, ErrOut: &errOut}, global,
				GetOptions{Output: output, ChunkSize: chunk}, []string{"pods,cm"})
			if err != nil {
				t.Fatalf("-o %s --chunk-size %d: %v (stderr %q)", output, chunk, err, errOut.String())
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("-o %s --chunk-size %d differs from kubectl's output:\n%s", output, chunk, firstDifference(out.Bytes(), want))
			}
		}
	}
}

func TestGetJSONAndYAMLOfNothingPrintAsKubectl(t *testing.T) {
	global := fakeCluster(t, byResource(map[string]http.HandlerFunc{"pods": pagedList(t, "empty.list.json")}))
	global.Namespace = "none"
	for _, output := range []string{"json", "yaml"} {
		var out, errOut bytes.Buffer
		if err := RunGet(t.Context(), Streams{Out: &out, ErrOut: &errOut}, global, GetOptions{Output: output, ChunkSize: 500}, []string{"pods"}); err != nil {
			t.Fatal(err)
		}
		if want := readGolden(t, "kubectl-empty."+output); !bytes.Equal(out.Bytes(), want) {
			t.Errorf("-o %s of no pods differs from kubectl's output:\n%s", output, firstDifference(out.Bytes(), want))
		}
	}
}

// The cache path (get with --sort-by) prints the same List as kubectl.
func TestGetSortedJSONPrintsKubectlsList(t *testing.T) {
	global := fakeCluster(t, byResource(map[string]http.HandlerFunc{"pods": pagedList(t, "pods.list.json")}))
	global.Namespace = "t1"
	var out, errOut bytes.Buffer
	if err := RunGet(t.Context(), Streams{Out: &out, ErrOut: &errOut}, global,
		GetOptions{Output: "json", SortBy: ".metadata.name", ChunkSize: 500}, []string{"pods"}); err != nil {
		t.Fatal(err)
	}
	if want := readGolden(t, "kubectl-pods.json"); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("-o json --sort-by .metadata.name differs from kubectl's output:\n%s", firstDifference(out.Bytes(), want))
	}
}

// A custom resource's numbers (floats, large integers) print as kubectl
// prints them.
func TestDocumentWriterCustomResourceAsKubectl(t *testing.T) {
	for _, output := range []string{"json", "yaml"} {
		var out bytes.Buffer
		d := newDocumentWriter(&out, output)
		if err := d.begin(); err != nil {
			t.Fatal(err)
		}
		if _, err := decodeList(bytes.NewReader(readGolden(t, "gadgets.list.json")), func(item []byte) error {
			return d.item(item, "doc.kinformer.dev/v1", "Gadget")
		}); err != nil {
			t.Fatal(err)
		}
		if err := d.end(); err != nil {
			t.Fatal(err)
		}
		if want := readGolden(t, "kubectl-gadgets."+output); !bytes.Equal(out.Bytes(), want) {
			t.Errorf("-o %s of a custom resource differs from kubectl's output:\n%s", output, firstDifference(out.Bytes(), want))
		}
	}
}

// get -o json writes each object as it arrives: the first (larger than
// the output's buffer) is on the output while the server still holds back
// the rest of the list.
func TestGetJSONStreamsObjectsAsTheyCome(t *testing.T) {
	seen := make(chan struct{})
	var streamed bool
	global := fakeCluster(t, byResource(map[string]http.HandlerFunc{"pods": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			http.Error(w, "no watch here", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"first","namespace":"t1","annotations":{"big":%q}}}`,
			strings.Repeat("x", 256<<10))
		w.(http.Flusher).Flush()
		// The rest of the list waits until the first object was printed
		// (a safety timer ends the wait for a command that never prints
		// before the list is complete, which then fails below).
		select {
		case <-seen:
			streamed = true
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `,{"metadata":{"name":"second","namespace":"t1"}}]}`)
	}}))
	global.Namespace = "t1"
	out := &watchingWriter{want: []byte(`"name": "first"`), seen: seen}
	if err := RunGet(t.Context(), Streams{Out: out, ErrOut: &bytes.Buffer{}}, global, GetOptions{Output: "json", ChunkSize: 500}, []string{"pods"}); err != nil {
		t.Fatal(err)
	}
	if !streamed {
		t.Error("the first pod was not printed before the list was complete")
	}
	if got := out.String(); !strings.Contains(got, `"name": "second"`) {
		t.Errorf("output lacks the second pod:\n%s", got)
	}
}

// -o name reads the list as metadata only and prints each name as it is
// read, in the server's order as kubectl does, without an informer (no
// watch) and without sorting.
func TestGetNamesStreamInTheServersOrder(t *testing.T) {
	var accept []string
	var watched bool
	var mu sync.Mutex
	global := fakeCluster(t, byResource(map[string]http.HandlerFunc{"pods": func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Query().Get("watch") == "true" {
			watched = true
			http.Error(w, "no watch here", http.StatusMethodNotAllowed)
			return
		}
		accept = append(accept, r.Header.Get("Accept"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},"items":[`+
			`{"metadata":{"name":"zeta","namespace":"t2"}},{"metadata":{"name":"alpha","namespace":"t1"}},{"metadata":{"name":"mid","namespace":"t1"}}]}`)
	}}))
	var out, errOut bytes.Buffer
	if err := RunGet(t.Context(), Streams{Out: &out, ErrOut: &errOut}, global, GetOptions{Output: "name", ChunkSize: 500}, []string{"pods"}); err != nil {
		t.Fatal(err)
	}
	if want := "pod/zeta\npod/alpha\npod/mid\n"; out.String() != want {
		t.Errorf("stdout %q, want %q (the server's order)", out.String(), want)
	}
	mu.Lock()
	defer mu.Unlock()
	if watched {
		t.Error("-o name started a watch: it should read one list and print as it reads")
	}
	if len(accept) != 1 || !strings.Contains(accept[0], "as=PartialObjectMetadataList") {
		t.Errorf("list requests' Accept headers %q, want one asking for metadata only", accept)
	}
}

// watchingWriter closes seen once what was written contains want.
type watchingWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want []byte
	seen chan struct{}
	once sync.Once
}

func (w *watchingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Contains(w.buf.Bytes(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watchingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestDecodeListRejectsWhatIsNotAList(t *testing.T) {
	for _, body := range []string{
		``,
		`[]`,
		`{"kind":"Status"}`,
		`{"items":{}}`,
		`{"items":[{"a":1},`,
		`{"items":[1] `,
	} {
		_, err := decodeList(strings.NewReader(body), func([]byte) error { return nil })
		if err == nil {
			t.Errorf("decodeList(%q) = nil error, want one", body)
		}
	}
	var names []string
	cont, err := decodeList(strings.NewReader(`{"metadata":{"continue":"c2"},"items":[{"n":"a"},{"n":"b"}]}`), func(b []byte) error {
		names = append(names, string(b))
		return nil
	})
	if err != nil || cont != "c2" || len(names) != 2 || names[1] != `{"n":"b"}` {
		t.Errorf("decodeList = %q, %q, %v; want c2 and both items", cont, names, err)
	}
}

// firstDifference shows where got and want part, with some context.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("at byte %d (of %d, want %d):\ngot:  %q\nwant: %q", i, len(got), len(want),
		got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
}
