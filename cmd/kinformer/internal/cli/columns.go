package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/kinformer/kinformer/kube/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
)

// tableView says what a table of one resource prints: the server's columns
// (all of them with -o wide, those of priority 0 otherwise, in the server's
// order, so AGE sits where kubectl shows it), preceded by the columns
// kinformer adds: EVENT for watch, NAMESPACE when the rows come from every
// namespace. The server decides everything else, a custom resource's
// additionalPrinterColumns included.
type tableView struct {
	columns []metav1.TableColumnDefinition
	// visible are the indexes of the printed columns in columns.
	visible []int
	// nameCol is the index of the name column in columns, or -1.
	nameCol int
	// event adds an EVENT column first; namespace a NAMESPACE column.
	event, namespace bool
	// kind, when set, prefixes names as kubectl does when it prints
	// several kinds: "configmap/web", "deployment.apps/web".
	kind string
	// labelColumns (-L) and showLabels (--show-labels) add columns after
	// the server's, as kubectl does: one per label key, then LABELS.
	labelColumns []string
	showLabels   bool
}

// viewOptions say how a resource's table is printed.
type viewOptions struct {
	wide  bool
	event bool
	// withKind prefixes names with their kind (several kinds printed).
	withKind bool
	// labelColumns are -L's label keys, showLabels --show-labels; both
	// read each row's metadata.
	labelColumns []string
	showLabels   bool
}

func newTableView(t target, cols []metav1.TableColumnDefinition, opts viewOptions) tableView {
	v := tableView{columns: cols, nameCol: table.NameColumn(cols), event: opts.event,
		namespace: t.res.Namespaced && t.namespace == "", labelColumns: opts.labelColumns, showLabels: opts.showLabels}
	for i, c := range cols {
		if c.Priority == 0 || opts.wide {
			v.visible = append(v.visible, i)
		}
	}
	if opts.withKind {
		v.kind = strings.TrimSuffix(kindName(t, ""), "/")
	}
	return v
}

// eventWidth is the width of the EVENT column: the longest event name, so
// that every row lines up with the header whatever its event.
var eventWidth = len("MODIFIED")

func (v tableView) header() []string {
	var h []string
	if v.event {
		h = append(h, "EVENT")
	}
	if v.namespace {
		h = append(h, "NAMESPACE")
	}
	for _, i := range v.visible {
		h = append(h, strings.ToUpper(v.columns[i].Name))
	}
	for _, k := range v.labelColumns {
		// kubectl heads a label's column with the key's name, without its
		// prefix: example.com/team is TEAM.
		h = append(h, strings.ToUpper(k[strings.LastIndex(k, "/")+1:]))
	}
	if v.showLabels {
		h = append(h, "LABELS")
	}
	return h
}

// row renders r under the header; event is used with an EVENT column.
func (v tableView) row(event string, r *tableRow) []string {
	out := make([]string, 0, len(v.visible)+2)
	if v.event {
		out = append(out, event)
	}
	if v.namespace {
		out = append(out, orNone(r.Namespace))
	}
	for _, i := range v.visible {
		var cell any
		if i < len(r.Cells) {
			cell = r.Cells[i]
		}
		text := cellText(cell)
		if i == v.nameCol && v.kind != "" {
			text = v.kind + "/" + text
		}
		out = append(out, text)
	}
	if len(v.labelColumns) > 0 || v.showLabels {
		ls := rowLabels(r)
		for _, k := range v.labelColumns {
			out = append(out, ls[k]) // "" without the label, as kubectl prints it
		}
		if v.showLabels {
			out = append(out, labels.FormatLabels(ls))
		}
	}
	return out
}

// rowLabels are the labels of the row's object, from the metadata it
// carries (see tableInclude).
func rowLabels(r *tableRow) map[string]string {
	md, _ := r.Object["metadata"].(map[string]any)
	raw, _ := md["labels"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// sameColumns reports whether a and b define the same columns (names,
// types and priorities).
func sameColumns(a, b []metav1.TableColumnDefinition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type != b[i].Type || a[i].Priority != b[i].Priority || a[i].Format != b[i].Format {
			return false
		}
	}
	return true
}

// cellText renders one cell as kubectl does: numbers and booleans as the
// server wrote them, text cut at its first line break with "...", and
// nothing at all for an absent value (a custom resource's optional
// printer column on an object without that field), with one difference:
// control characters are shown in caret notation (^[) so a cell cannot
// drive the terminal.
func cellText(cell any) string {
	var s string
	switch c := cell.(type) {
	case nil:
		return ""
	case string:
		s = c
	default:
		s = fmt.Sprint(c)
	}
	if i := strings.IndexAny(s, "\n\r\f"); i >= 0 {
		s = s[:i] + "..."
	}
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			b.WriteByte('^')
			b.WriteRune(r ^ 0x40)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// ageSince is how long ago ts was, as kubectl shows ages ("5m12s").
func ageSince(ts metav1.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(ts.Time))
}
