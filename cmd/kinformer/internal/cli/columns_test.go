package cli

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podColumns are the server's Table columns for pods (priority 1: wide).
var podColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name"},
	{Name: "Ready", Type: "string"},
	{Name: "Status", Type: "string"},
	{Name: "Restarts", Type: "string"},
	{Name: "Age", Type: "string"},
	{Name: "IP", Type: "string", Priority: 1},
	{Name: "Node", Type: "string", Priority: 1},
	{Name: "Nominated Node", Type: "string", Priority: 1},
	{Name: "Readiness Gates", Type: "string", Priority: 1},
}

func podRow(ns, name string) *tableRow {
	return &tableRow{Namespace: ns, Name: name,
		Cells: []any{name, "0/1", "Pending", "0", "5m", "<none>", "<none>", "<none>", "<none>"}}
}

func TestTableViewShowsTheServersColumnsInOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target target
		opts   viewOptions
		header string
		row    string
	}{
		{"default columns", podTarget("web"), viewOptions{},
			"NAME|READY|STATUS|RESTARTS|AGE", "web-0|0/1|Pending|0|5m"},
		{"wide: AGE stays where the server puts it", podTarget("web"), viewOptions{wide: true},
			"NAME|READY|STATUS|RESTARTS|AGE|IP|NODE|NOMINATED NODE|READINESS GATES",
			"web-0|0/1|Pending|0|5m|<none>|<none>|<none>|<none>"},
		{"every namespace, watch", podTarget(""), viewOptions{event: true},
			"EVENT|NAMESPACE|NAME|READY|STATUS|RESTARTS|AGE", "MODIFIED|web|web-0|0/1|Pending|0|5m"},
		{"several kinds: names carry their kind", deployTarget("web", 1), viewOptions{withKind: true},
			"NAME|READY|STATUS|RESTARTS|AGE", "deployment.apps/web-0|0/1|Pending|0|5m"},
	} {
		v := newTableView(tc.target, podColumns, tc.opts)
		if got := strings.Join(v.header(), "|"); got != tc.header {
			t.Errorf("%s: header %q, want %q", tc.name, got, tc.header)
		}
		if got := strings.Join(v.row("MODIFIED", podRow("web", "web-0")), "|"); got != tc.row {
			t.Errorf("%s: row %q, want %q", tc.name, got, tc.row)
		}
	}
}

func TestTableViewToleratesShortRowsAndClusterScope(t *testing.T) {
	ns := podTarget("")
	ns.res.Namespaced = false // a cluster-scoped resource read "everywhere" has no NAMESPACE column
	v := newTableView(ns, podColumns, viewOptions{})
	row := v.row("", &tableRow{Name: "x", Cells: []any{"x", "1/1"}})
	if got := strings.Join(row, "|"); got != "x|1/1|||" {
		t.Errorf("short row %q", got)
	}
}

func TestCellText(t *testing.T) {
	for _, tc := range []struct {
		cell any
		want string
	}{
		// Nothing for an absent value, as kubectl prints a custom
		// resource's optional column on an object without the field.
		{nil, ""},
		{"", ""},
		{int64(3), "3"},
		{float64(2.5), "2.5"},
		{false, "false"},
		{"Running", "Running"},
		{json.Number("3"), "3"},
		{json.Number("0.5"), "0.5"},
		{true, "true"},
		{"first line\nsecond", "first line..."},
		{"bell\x07 and \x1b[31mred", "bell^G and ^[[31mred"},
		{"ünïcode", "ünïcode"},
	} {
		if got := cellText(tc.cell); got != tc.want {
			t.Errorf("cellText(%q) = %q, want %q", tc.cell, got, tc.want)
		}
	}
}

func TestSameColumns(t *testing.T) {
	a := podColumns[:3]
	b := append([]metav1.TableColumnDefinition(nil), a...)
	if !sameColumns(a, b) {
		t.Error("equal columns differ")
	}
	b[2].Priority = 1
	if sameColumns(a, b) || sameColumns(a, a[:2]) {
		t.Error("different columns are the same")
	}
}
