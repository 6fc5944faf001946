package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/kinformer/kinformer/internal/listquery"
	"github.com/kinformer/kinformer/listwatch"
)

// -o json and -o yaml of get print every object whole, which at 100,000
// pods is gigabytes of text. Printed from an informer's cache, the objects
// were held twice (the cache, then the marshalled document). Without
// --sort-by, names or --shard nothing needs them all at once, so get lists
// each resource page by page and writes each object as it is decoded from
// the response: the List's opening, then the items in the server's order,
// then its closing, exactly as kubectl prints them (documentWriter).
// Memory stays at about one object, whatever the size of the list; the
// price is that an error after the first page leaves the output cut short
// (with the error on stderr and a non-zero exit, as for an interrupt).

// streamable says whether get can stream its -o json or -o yaml output:
// no sorting, no names (a single name prints the object itself, several
// print in the order given) and no --shard (filtered on the client when
// the server ignores the selector).
func streamable(output string, sortPath []string, names []string, sess *session) bool {
	return (output == outputJSON || output == outputYAML || output == outputName) && len(sortPath) == 0 && len(names) == 0 && sess.shard.IsZero()
}

// streamDocument writes the List of every target's objects to out, listing
// each target in pages of chunk objects (0: one response), as they come.
func streamDocument(ctx context.Context, g getter, output string, chunk int64) error {
	if g.global.SyncTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, g.global.SyncTimeout,
			fmt.Errorf("%w after %s (is the server slow, or the list very large? raise --sync-timeout)", errSyncTimeout, g.global.SyncTimeout))
		defer cancel()
	}
	out := newBufferedWriter(g.streams.Out)
	if output == outputName {
		return streamNames(ctx, g, chunk, out)
	}
	dw := newDocumentWriter(out, output)
	if err := dw.begin(); err != nil {
		return err
	}
	for _, t := range g.sess.targets {
		if err := listInto(ctx, g, t, chunk, "application/json", dw.item); err != nil {
			if cause := context.Cause(ctx); errors.Is(cause, errSyncTimeout) {
				err = fmt.Errorf("%s: %w", informerName(t), cause)
			}
			out.flush() // what was printed before the failure
			return explain(err, g.sess.cfg.Host, t.arg)
		}
	}
	if err := dw.end(); err != nil {
		return err
	}
	return out.flush()
}

// streamNames prints kind/name for every target's objects as the server
// lists them (kubectl's order: it does not sort -o name either), each
// target listed as metadata only, in pages of chunk objects (0: one
// response). Nothing is cached: a name is printed as its item is read.
func streamNames(ctx context.Context, g getter, chunk int64, out *bufferedWriter) error {
	printed := 0
	for _, t := range g.sess.targets {
		err := listInto(ctx, g, t, chunk, acceptMetadataList, func(item []byte, _, _ string) error {
			var obj struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(item, &obj); err != nil {
				return fmt.Errorf("list item: %w", err)
			}
			printed++
			out.writeLine(kindName(t, obj.Metadata.Name))
			return nil
		})
		if err != nil {
			if cause := context.Cause(ctx); errors.Is(cause, errSyncTimeout) {
				err = fmt.Errorf("%s: %w", informerName(t), cause)
			}
			out.flush() // what was printed before the failure
			return explain(err, g.sess.cfg.Host, t.arg)
		}
	}
	if printed == 0 {
		fmt.Fprintf(g.streams.ErrOut, "No resources found%s.\n", inNamespace(g.sess.targets[0]))
	}
	return out.flush()
}

// acceptMetadataList asks for a list's items as metadata only (names and
// labels are all -o name needs), falling back to whole objects.
const acceptMetadataList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

// listInto lists t page by page, asking for the accept media type (whole
// objects or metadata only, both JSON), and hands each object to item with
// the target's apiVersion and kind (a list's items may come without them).
func listInto(ctx context.Context, g getter, t target, chunk int64, accept string, item func(raw []byte, apiVersion, kind string) error) error {
	client, err := listquery.NewClient(g.sess.cfg, t.res.GVR, accept, nil)
	if err != nil {
		return err
	}
	gv := t.res.GVR.GroupVersion().String()
	opts := listwatch.Options{Limit: max(chunk, 0)}
	for {
		r := client.Get().Resource(t.res.GVR.Resource).SetHeader("Accept", accept)
		if t.namespace != "" {
			r = r.Namespace(t.namespace)
		}
		r = listquery.Set(r, opts, false, listquery.Selectors{Label: g.global.LabelSelector, Field: g.global.FieldSelector})
		body, err := r.Stream(ctx)
		if err != nil {
			return listquery.MapError(err)
		}
		cont, err := decodeList(body, func(raw []byte) error { return item(raw, gv, t.res.Kind) })
		_ = body.Close()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("list %s: %w", informerName(t), err)
		}
		if cont == "" {
			return nil
		}
		opts.Continue = cont
	}
}

// decodeList reads a list response (a JSON object with an "items" array)
// from r, calls item with each element's JSON as it is read (the slice is
// valid during the call only), and returns the list's continue token.
func decodeList(r io.Reader, item func([]byte) error) (cont string, err error) {
	dec := json.NewDecoder(r)
	if err := listDelim(dec, '{'); err != nil {
		return "", err
	}
	sawItems := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case "items":
			sawItems = true
			if err := decodeItems(dec, item); err != nil {
				return "", err
			}
		case "metadata":
			var meta struct {
				Continue string `json:"continue"`
			}
			if err := dec.Decode(&meta); err != nil {
				return "", fmt.Errorf("list metadata: %w", err)
			}
			cont = meta.Continue
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
	if err := listDelim(dec, '}'); err != nil {
		return "", err
	}
	if !sawItems {
		return "", errors.New("the response is not a list: it has no items")
	}
	return cont, nil
}

// decodeItems reads the items array (null for none) and calls item with
// each element.
func decodeItems(dec *json.Decoder, item func([]byte) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("list items: want an array, got %v", tok)
	}
	var raw json.RawMessage
	for dec.More() {
		raw = raw[:0]
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("list item: %w", err)
		}
		if err := item(raw); err != nil {
			return err
		}
	}
	return listDelim(dec, ']')
}

func listDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("malformed list: want %q, got %v", want, tok)
	}
	return nil
}

// printDocument prints objects from the cache (get with names, --sort-by
// or --shard) as one JSON or YAML document: the object itself when one
// was asked for by name, a List otherwise, as kubectl prints them.
func printDocument(g getter, per [][]*unstructured.Unstructured, output string) error {
	w := newBufferedWriter(g.streams.Out)
	if len(g.names) == 1 && len(per) == 1 && len(per[0]) == 1 {
		var err error
		if output == outputJSON {
			err = writeIndentedJSON(w, per[0][0].Object)
		} else {
			err = writeYAML(w, per[0][0].Object, true)
		}
		return errors.Join(err, w.flush())
	}
	d := newDocumentWriter(w, output)
	err := d.begin()
	for _, objs := range per {
		for _, o := range objs {
			err = errors.Join(err, d.object(o.Object))
		}
	}
	return errors.Join(err, d.end(), w.flush())
}

// documentWriter writes a List of objects as kubectl get -o json or -o
// yaml prints it, one object at a time. kubectl gathers the objects into a
// v1 List (apiVersion v1, kind List, metadata with an empty
// resourceVersion), decodes it as unstructured and marshals the whole:
// JSON indented by four spaces, keys sorted; YAML through sigs.k8s.io/yaml,
// keys sorted, the items' sequence not indented under "items:". Each item
// is marshalled here as it would be inside that document (JSON indented
// from its depth; YAML as an element of a top-level sequence, which the
// YAML writer places at the same columns, so long strings fold at the same
// places), and the document's fixed parts are written around them.
type documentWriter struct {
	w      io.Writer
	yaml   bool
	n      int
	indent bytes.Buffer
}

func newDocumentWriter(w io.Writer, output string) *documentWriter {
	return &documentWriter{w: w, yaml: output == outputYAML}
}

func (d *documentWriter) begin() error {
	if d.yaml {
		_, err := io.WriteString(d.w, "apiVersion: v1\n")
		return err
	}
	_, err := io.WriteString(d.w, "{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
	return err
}

// item writes one object, given as the server's JSON; an object without
// apiVersion and kind (as a list's items come) gets apiVersion and kind,
// as kubectl's decoding gives them, and managedFields are left out, as
// kubectl leaves them out unless --show-managed-fields.
func (d *documentWriter) item(raw []byte, apiVersion, kind string) error {
	var obj map[string]any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("list item: %w", err)
	}
	if obj == nil {
		return errors.New("list item: null")
	}
	if obj["kind"] == nil && obj["apiVersion"] == nil {
		obj["apiVersion"], obj["kind"] = apiVersion, kind
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	return d.object(obj)
}

// object writes one object of the List.
func (d *documentWriter) object(obj map[string]any) error {
	d.n++
	if d.yaml {
		b, err := yaml.Marshal([]any{obj})
		if err != nil {
			return err
		}
		if d.n == 1 {
			if _, err := io.WriteString(d.w, "items:\n"); err != nil {
				return err
			}
		}
		_, err = d.w.Write(b)
		return err
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	d.indent.Reset()
	if d.n == 1 {
		d.indent.WriteString("\n        ")
	} else {
		d.indent.WriteString(",\n        ")
	}
	if err := json.Indent(&d.indent, b, "        ", "    "); err != nil {
		return err
	}
	_, err = d.w.Write(d.indent.Bytes())
	return err
}

func (d *documentWriter) end() error {
	var tail string
	switch {
	case d.yaml && d.n == 0:
		tail = "items: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
	case d.yaml:
		tail = "kind: List\nmetadata:\n  resourceVersion: \"\"\n"
	case d.n == 0:
		tail = "],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"
	default:
		tail = "\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"
	}
	_, err := io.WriteString(d.w, tail)
	return err
}
