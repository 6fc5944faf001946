package cli

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// -L and --show-labels add kubectl's columns after the server's: one per
// key, headed by the key without its prefix, empty without the label; then
// LABELS, sorted key=value pairs or <none>.
func TestTableViewLabelColumns(t *testing.T) {
	cols := []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Data", Type: "integer"}}
	v := newTableView(podTarget("web"), cols, viewOptions{labelColumns: []string{"app", "example.com/team"}, showLabels: true})
	if got, want := v.header(), []string{"NAME", "DATA", "APP", "TEAM", "LABELS"}; !slices.Equal(got, want) {
		t.Errorf("header %q, want %q", got, want)
	}
	labeled := &tableRow{Name: "a", Cells: []any{"a", 1}, Object: map[string]any{"metadata": map[string]any{
		"labels": map[string]any{"tier": "front", "app": "web", "example.com/team": "blue"}}}}
	if got, want := v.row("", labeled), []string{"a", "1", "web", "blue", "app=web,example.com/team=blue,tier=front"}; !slices.Equal(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
	bare := &tableRow{Name: "b", Cells: []any{"b", 0}, Object: map[string]any{"metadata": map[string]any{}}}
	if got, want := v.row("", bare), []string{"b", "0", "", "", "<none>"}; !slices.Equal(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
}

// Without headers, columns keep kubectl's narrowest width: 3, then the
// gap, so "2" under no DATA header still takes 6 with its padding.
func TestRowWriterKeepsKubectlsNarrowestColumn(t *testing.T) {
	var b strings.Builder
	rw := &rowWriter{w: &b}
	rows := [][]string{{"bare", "2", "4s", "", "<none>"}, {"db", "0", "4s", "db", "app=db"}}
	rw.fit(rows...)
	for _, r := range rows {
		if err := rw.write(r); err != nil {
			t.Fatal(err)
		}
	}
	if want := "bare   2     4s          <none>\ndb     0     4s    db    app=db\n"; b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// A template that does not parse is refused before anything is listed,
// naming the flag; kubectl's relaxed paths are accepted.
func TestTemplateOutputsAreCheckedFirst(t *testing.T) {
	for _, o := range []string{"custom-columns=NAME:.metadata.name,NS:metadata.namespace,X:{.spec.x},Y:{spec.y}", "jsonpath={.items[*].metadata.name}"} {
		if err := checkTemplate(o); err != nil {
			t.Errorf("%s: %v", o, err)
		}
	}
	for _, o := range []string{"custom-columns=", "custom-columns=NAME", "custom-columns=NAME:{{.x}}", "jsonpath={.items["} {
		err := checkTemplate(o)
		if err == nil || !strings.Contains(err.Error(), "-o ") {
			t.Errorf("%s: %v, want an error naming -o", o, err)
		}
	}
}
