package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// columnStarts returns where each column of line starts, reading columns
// as runs of text separated by two spaces or more (cells here hold at most
// one space in a row, as "NOMINATED NODE" does).
func columnStarts(line string) []int {
	var starts []int
	for i := 0; i < len(line); i++ {
		if line[i] == ' ' {
			continue
		}
		if i == 0 || (i >= 2 && line[i-1] == ' ' && line[i-2] == ' ') {
			starts = append(starts, i)
		}
	}
	return starts
}

// checkAligned fails unless every row starts its columns where the header
// above it (the last line starting with header's first word) does.
func checkAligned(t *testing.T, out, firstHeaderWord string) {
	t.Helper()
	var header []int
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, firstHeaderWord+" ") {
			header = columnStarts(line)
			continue
		}
		if header == nil {
			t.Fatalf("row before any header: %q\n%s", line, out)
		}
		if got := columnStarts(line); !equalInts(got, header) {
			t.Errorf("row %q starts its columns at %v, its header at %v:\n%s", line, got, header, out)
		}
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

func tableSourcesWith(t target, cols []metav1.TableColumnDefinition) *tableSources {
	ts := newTableSources(includeMetadata, false)
	ts.byResource[t.res.GVR] = fixedColumns(cols)
	return ts
}

// fixedColumns are the columns of a source that never asked the server.
type fixedColumns []metav1.TableColumnDefinition

func (c fixedColumns) Columns() []metav1.TableColumnDefinition { return c }

func TestWatchTableRowsLineUpWithTheHeader(t *testing.T) {
	var out bytes.Buffer
	pt := podTarget("web")
	ts := tableSourcesWith(pt, podColumns)
	p := &eventPrinter[*tableRow]{w: &out, format: newTableFormat(ts, []target{pt}, false)}
	h := p.handlerFor(pt)
	h.OnAdd(podRow("web", "b"), true)
	h.OnAdd(podRow("web", "a"), true)
	h.OnUpdate(podRow("web", "b"), podRow("web", "b")) // during the sync
	if out.Len() != 0 {
		t.Fatalf("printed before flush: %q", out.String())
	}
	p.flush()
	h.OnUpdate(podRow("web", "a"), podRow("web", "a"))
	h.OnDelete(podRow("web", "a"), false)
	h.OnAdd(podRow("web", "a-much-longer-name-than-before"), false) // widens NAME: the header comes again
	h.OnDelete(podRow("web", "b"), false)
	if err := p.error(); err != nil {
		t.Fatal(err)
	}
	checkAligned(t, out.String(), "EVENT")
	var events []string
	headers := 0
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(l)
		if f[0] == "EVENT" {
			headers++
			continue
		}
		events = append(events, f[0]+" "+f[1])
	}
	want := "ADDED a,ADDED b,MODIFIED b,MODIFIED a,DELETED a,ADDED a-much-longer-name-than-before,DELETED b"
	if got := strings.Join(events, ","); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if headers != 2 {
		t.Errorf("%d headers, want 2 (the first, and one after the name column widened):\n%s", headers, out.String())
	}
}

func TestWatchTablesOfSeveralKindsAndWatchOnly(t *testing.T) {
	var out bytes.Buffer
	pt, dt := podTarget("web"), deployTarget("web", 1)
	ts := tableSourcesWith(pt, podColumns)
	deployCols := []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Ready", Type: "string"}, {Name: "Age", Type: "string"}}
	ts.byResource[dt.res.GVR] = fixedColumns(deployCols)
	p := &eventPrinter[*tableRow]{w: &out, watchOnly: true, format: newTableFormat(ts, []target{pt, dt}, false)}
	hp, hd := p.handlerFor(pt), p.handlerFor(dt)
	hp.OnAdd(podRow("web", "an-old-pod-with-a-long-name"), true)
	p.flush()
	if out.Len() != 0 {
		t.Fatalf("--watch-only printed the initial objects: %q", out.String())
	}
	hp.OnAdd(podRow("web", "p"), false)
	hd.OnAdd(&tableRow{Namespace: "web", Name: "d", Cells: []any{"d", "1/1", "1m"}}, false)
	hp.OnDelete(podRow("web", "p"), false)
	checkAligned(t, out.String(), "EVENT")
	got := out.String()
	if strings.Count(got, "EVENT") != 3 || strings.Count(got, "\n\n") != 2 {
		t.Errorf("want a header per change of kind, after a blank line:\n%s", got)
	}
	if !strings.Contains(got, "pod/p ") || !strings.Contains(got, "deployment.apps/d ") {
		t.Errorf("names without their kind:\n%s", got)
	}
	// The columns were sized from the initial objects even though they were
	// not printed: the pod rows leave room for the long name.
	if i := strings.Index(got, "READY"); i < len("EVENT     an-old-pod-with-a-long-name") {
		t.Errorf("columns not sized from the initial objects:\n%s", got)
	}
}

func TestWatchDocumentsJSONAndYAML(t *testing.T) {
	pt := podTarget("web")
	for _, output := range []string{outputJSON, outputYAML} {
		var out bytes.Buffer
		p := &eventPrinter[*unstructured.Unstructured]{w: &out, watchOnly: true, format: &documentFormat{output: output}}
		h := p.handlerFor(pt)
		h.OnAdd(obj("Pod", "web", "old", 0, nil), true)
		p.flush()
		h.OnAdd(obj("Pod", "web", "new", 0, nil), false)
		h.OnDelete(obj("Pod", "web", "new", 0, nil), false)
		got := out.String()
		if output == outputJSON {
			lines := strings.Split(strings.TrimSpace(got), "\n")
			if len(lines) != 2 {
				t.Fatalf("-o json printed %q, want two lines", got)
			}
			var ev struct {
				Type   string `json:"type"`
				Object struct {
					Metadata struct{ Name string } `json:"metadata"`
				} `json:"object"`
			}
			if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "new" {
				t.Errorf("line %q: %+v %v", lines[0], ev, err)
			}
			continue
		}
		if strings.HasPrefix(got, "---") || strings.Count(got, "---\n") != 1 || !strings.Contains(got, "type: DELETED") {
			t.Errorf("-o yaml: two documents, separated by one ---, none before the first; got\n%s", got)
		}
	}
}

func TestWatchNames(t *testing.T) {
	var out bytes.Buffer
	dt := deployTarget("web", 0)
	p := &eventPrinter[*metav1.PartialObjectMetadata]{w: &out, format: nameFormat[*metav1.PartialObjectMetadata]{}}
	h := p.handlerFor(dt)
	h.OnAdd(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "b"}}, true)
	h.OnAdd(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "a"}}, true)
	p.flush()
	h.OnDelete(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "a"}}, true)
	want := "ADDED deployment.apps/a\nADDED deployment.apps/b\nDELETED deployment.apps/a\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errClosed }

var errClosed = errors.New("closed pipe")

func TestWatchEndsOnAWriteError(t *testing.T) {
	pt := podTarget("web")
	p := &eventPrinter[*metav1.PartialObjectMetadata]{w: failingWriter{}, format: nameFormat[*metav1.PartialObjectMetadata]{}}
	h := p.handlerFor(pt)
	p.flush()
	h.OnAdd(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "a"}}, false)
	select {
	case <-p.failed:
	default:
		t.Fatal("a failed write did not end the watch")
	}
	if p.error() == nil {
		t.Error("no error kept")
	}
}
