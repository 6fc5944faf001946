package cli

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
)

// -o jsonpath=TEMPLATE and -o custom-columns=SPEC, as kubectl prints them.
const (
	jsonPathPrefix      = "jsonpath="
	customColumnsPrefix = "custom-columns="
)

// isTemplateOutput reports whether -o is one of the template outputs.
func isTemplateOutput(o string) bool {
	return strings.HasPrefix(o, jsonPathPrefix) || strings.HasPrefix(o, customColumnsPrefix)
}

// checkTemplate parses a template output, so that a mistake is told
// before anything is listed.
func checkTemplate(o string) error {
	if spec, ok := strings.CutPrefix(o, customColumnsPrefix); ok {
		_, err := parseCustomColumns(spec)
		return err
	}
	if t, ok := strings.CutPrefix(o, jsonPathPrefix); ok {
		_, err := parseJSONPath(t)
		return err
	}
	return nil
}

// customColumn is one NAME:PATH of -o custom-columns.
type customColumn struct {
	header string
	path   *jsonpath.JSONPath
}

// relaxedPath accepts a field path as kubectl's custom columns do:
// metadata.name, .metadata.name, {metadata.name} or {.metadata.name}.
var relaxedPath = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// parseCustomColumns parses -o custom-columns=HEADER:PATH,...
func parseCustomColumns(spec string) ([]customColumn, error) {
	if spec == "" {
		return nil, fmt.Errorf("-o custom-columns= needs columns, such as custom-columns=NAME:.metadata.name,NODE:.spec.nodeName")
	}
	var cols []customColumn
	for i, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		m := relaxedPath.FindStringSubmatch(path)
		if !ok || m == nil {
			return nil, fmt.Errorf("-o custom-columns: %q is not HEADER:FIELD-PATH, such as NAME:.metadata.name", part)
		}
		field := m[1]
		if field == "" {
			field = m[2]
		}
		p := jsonpath.New(fmt.Sprintf("column%d", i)).AllowMissingKeys(true)
		if err := p.Parse("{." + field + "}"); err != nil {
			return nil, fmt.Errorf("-o custom-columns: %s: %w", part, err)
		}
		cols = append(cols, customColumn{header: header, path: p})
	}
	return cols, nil
}

// parseJSONPath parses -o jsonpath=TEMPLATE, missing keys printing
// nothing, as kubectl's default --allow-missing-template-keys does.
func parseJSONPath(template string) (*jsonpath.JSONPath, error) {
	p := jsonpath.New("out").AllowMissingKeys(true)
	if err := p.Parse(template); err != nil {
		return nil, fmt.Errorf("-o jsonpath: %w", err)
	}
	return p, nil
}

// printTemplate prints the objects with -o jsonpath or custom-columns:
// the template runs on the object itself when one was asked for by name,
// on a List of every object otherwise, as kubectl runs it; custom columns
// print a row per object, each cell its path's values joined by commas,
// or <none>.
func printTemplate(g getter, per [][]*unstructured.Unstructured, output string, noHeaders bool) error {
	var objs []*unstructured.Unstructured
	for _, os := range per {
		objs = append(objs, os...)
	}
	w := newBufferedWriter(g.streams.Out)
	if spec, ok := strings.CutPrefix(output, customColumnsPrefix); ok {
		cols, err := parseCustomColumns(spec)
		if err != nil {
			return err
		}
		var rows [][]string
		if !noHeaders {
			h := make([]string, len(cols))
			for i, c := range cols {
				h[i] = c.header
			}
			rows = append(rows, h)
		}
		for _, o := range objs {
			row := make([]string, len(cols))
			for i, c := range cols {
				results, err := c.path.FindResults(o.Object)
				if err != nil {
					return fmt.Errorf("-o custom-columns: %s/%s: %w", o.GetNamespace(), o.GetName(), err)
				}
				var vals []string
				for _, rs := range results {
					for _, v := range rs {
						vals = append(vals, cellText(fmt.Sprint(v.Interface())))
					}
				}
				if len(vals) == 0 {
					vals = []string{"<none>"}
				}
				row[i] = strings.Join(vals, ",")
			}
			rows = append(rows, row)
		}
		rw := &rowWriter{w: w}
		rw.fit(rows...)
		for _, r := range rows {
			_ = rw.write(r) // errors are kept by w
		}
		return w.flush()
	}
	p, err := parseJSONPath(strings.TrimPrefix(output, jsonPathPrefix))
	if err != nil {
		return err
	}
	var data map[string]any
	if len(g.names) == 1 && len(objs) == 1 {
		data = objs[0].Object
	} else {
		items := make([]any, 0, len(objs))
		for _, o := range objs {
			items = append(items, o.Object)
		}
		data = map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items}
	}
	if err := p.Execute(w, data); err != nil {
		return fmt.Errorf("-o jsonpath: %w", err)
	}
	return w.flush()
}
