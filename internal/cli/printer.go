package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Output formats of -o.
const (
	outputTable = ""
	outputWide  = "wide"
	outputName  = "name"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

func validOutput(o string) error {
	switch o {
	case outputTable, outputWide, outputName, outputJSON, outputYAML:
		return nil
	}
	return fmt.Errorf("unknown output format %q: use one of name, wide, json, yaml (or nothing for a table)", o)
}

// kindName is what -o name prints: kind, lowercased, qualified by group
// when there is one, a slash and the name ("pod/web-0",
// "deployment.apps/web"), as kubectl prints it.
func kindName(t target, name string) string {
	k := strings.ToLower(t.res.Kind)
	if g := t.res.GVR.Group; g != "" {
		k += "." + g
	}
	return k + "/" + name
}

// rowWriter writes a table one row at a time: each column is padded to the
// widest cell seen so far in it, so a stream of rows stays mostly aligned
// without knowing its rows in advance (as `kubectl get -w` does).
type rowWriter struct {
	w      io.Writer
	widths []int
}

func (r *rowWriter) write(cells []string) error {
	for len(r.widths) < len(cells) {
		r.widths = append(r.widths, 0)
	}
	var b strings.Builder
	for i, c := range cells {
		r.widths[i] = max(r.widths[i], len(c))
		if i == len(cells)-1 {
			b.WriteString(c)
			break
		}
		b.WriteString(c)
		b.WriteString(strings.Repeat(" ", r.widths[i]-len(c)+3))
	}
	b.WriteByte('\n')
	_, err := io.WriteString(r.w, b.String())
	return err
}

// fit widens the columns for rows about to be written, so that a batch
// printed at once is aligned.
func (r *rowWriter) fit(rows [][]string) {
	for _, cells := range rows {
		for len(r.widths) < len(cells) {
			r.widths = append(r.widths, 0)
		}
		for i, c := range cells {
			r.widths[i] = max(r.widths[i], len(c))
		}
	}
}

// tableLayout decides the table columns for a set of targets.
type tableLayout struct {
	// event adds an EVENT column first (watch).
	event bool
	// namespace adds a NAMESPACE column (-A, or several namespaces).
	namespace bool
	// mixed is set for several kinds: NAME is kind/name and the per-kind
	// columns are one DETAILS column of HEADER=value pairs.
	mixed bool
	wide  bool
	// cols are the per-kind columns of a single kind.
	cols []column
}

func newTableLayout(targets []target, event, wide bool) tableLayout {
	l := tableLayout{event: event, wide: wide, mixed: len(targets) > 1}
	for _, t := range targets {
		if t.res.Namespaced && t.namespace == "" {
			l.namespace = true
		}
	}
	if !l.mixed {
		l.cols = columnsFor(targets[0].res.Kind, wide)
	}
	return l
}

func (l tableLayout) header() []string {
	var h []string
	if l.event {
		h = append(h, "EVENT")
	}
	if l.namespace {
		h = append(h, "NAMESPACE")
	}
	h = append(h, "NAME")
	if l.mixed {
		h = append(h, "AGE", "DETAILS")
		return h
	}
	for _, c := range l.cols {
		h = append(h, c.header)
	}
	return append(h, "AGE")
}

func (l tableLayout) row(event string, t target, u *unstructured.Unstructured, now time.Time) []string {
	var r []string
	if l.event {
		r = append(r, event)
	}
	if l.namespace {
		r = append(r, orNone(u.GetNamespace()))
	}
	if l.mixed {
		return append(r, kindName(t, u.GetName()), age(u, now), details(u, columnsFor(t.res.Kind, l.wide)))
	}
	r = append(r, u.GetName())
	for _, c := range l.cols {
		r = append(r, c.value(u))
	}
	return append(r, age(u, now))
}

// watchEvent is what -o json and -o yaml print for each event of watch,
// like `kubectl get -w -o json --output-watch-events`.
type watchEvent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// writeJSONLine writes v as one line of compact JSON.
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// writeYAMLDoc writes v as one YAML document, preceded by "---".
func writeYAMLDoc(w io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "---\n%s", b)
	return err
}

// writeIndentedJSON writes v as indented JSON, as kubectl get -o json does.
func writeIndentedJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
