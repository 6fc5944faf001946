package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

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
	if isTemplateOutput(o) {
		return nil // parsed when printed; get takes them, watch does not
	}
	return fmt.Errorf("unknown output format %q: use one of name, wide, json, yaml, jsonpath=TEMPLATE, custom-columns=SPEC (or nothing for a table)", o)
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

// columnGap is the space between two columns, as in kubectl.
const columnGap = 3

// minColumnWidth is the narrowest a column is: kubectl's tabwriter makes
// every cell at least 6 wide, its 3 blanks of padding included, which
// shows with --no-headers ("2" under no DATA header still takes 3) and
// with headers shorter than 3 (IP).
const minColumnWidth = 3

// rowWriter writes the rows of one table: each cell padded to its column's
// width, so rows line up with the header. fit sets the widths from rows
// about to be written (get fits the whole table first); a row with a cell
// wider than its column is still written, pushed right, and fits reports
// it beforehand so a caller streaming rows (watch) can widen the columns
// and print the header again.
type rowWriter struct {
	w      io.Writer
	widths []int
}

// fit widens the columns to hold rows.
func (r *rowWriter) fit(rows ...[]string) {
	for _, cells := range rows {
		for len(r.widths) < len(cells) {
			r.widths = append(r.widths, minColumnWidth)
		}
		for i, c := range cells {
			r.widths[i] = max(r.widths[i], textWidth(c))
		}
	}
}

// fits reports whether every cell of row (but the last, which is never
// padded) fits its column.
func (r *rowWriter) fits(row []string) bool {
	for i, c := range row[:max(len(row)-1, 0)] {
		if i >= len(r.widths) || textWidth(c) > r.widths[i] {
			return false
		}
	}
	return true
}

func (r *rowWriter) write(cells []string) error {
	var b strings.Builder
	for i, c := range cells {
		b.WriteString(c)
		if i == len(cells)-1 {
			break
		}
		pad := columnGap
		if i < len(r.widths) {
			pad += max(r.widths[i]-textWidth(c), 0)
		}
		b.WriteString(strings.Repeat(" ", pad))
	}
	b.WriteByte('\n')
	_, err := io.WriteString(r.w, b.String())
	return err
}

// textWidth is the number of characters in s (cells are one column per
// character on a terminal, wide scripts aside).
func textWidth(s string) int { return utf8.RuneCountInString(s) }

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

// writeYAML writes v as a YAML document. A stream of several documents
// (watch) separates them with "---"; first says whether this is the
// stream's first, which has no separator, as a single object or List
// printed by get has none.
func writeYAML(w io.Writer, v any, first bool) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	if !first {
		b = append([]byte("---\n"), b...)
	}
	_, err = w.Write(b)
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

// plural is n followed by noun, in the singular for one: "1 object",
// "3 objects".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
