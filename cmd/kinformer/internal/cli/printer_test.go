package cli

import (
	"strings"
	"testing"
)

func TestRowWriterAlignsRowsWithTheHeader(t *testing.T) {
	var b strings.Builder
	rw := &rowWriter{w: &b}
	rows := [][]string{{"NAME", "DATA", "AGE"}, {"a-long-name", "1", "1s"}, {"b", "12", "2s"}}
	rw.fit(rows...)
	for _, r := range rows {
		rw.write(r)
	}
	want := "NAME          DATA   AGE\n" +
		"a-long-name   1      1s\n" +
		"b             12     2s\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if !rw.fits([]string{"c", "1", "a very long last cell is never padded"}) {
		t.Error("a row whose cells fit does not fit")
	}
	if rw.fits([]string{"an-even-longer-name", "1", "1s"}) {
		t.Error("a row wider than its column fits")
	}
}

func TestRowWriterCountsCharactersNotBytes(t *testing.T) {
	var b strings.Builder
	rw := &rowWriter{w: &b}
	rows := [][]string{{"NAME", "AGE"}, {"ünï", "1s"}}
	rw.fit(rows...)
	for _, r := range rows {
		rw.write(r)
	}
	if want := "NAME   AGE\nünï    1s\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestYAMLDocumentsAreSeparatedNotPreceded(t *testing.T) {
	var b strings.Builder
	if err := writeYAML(&b, map[string]any{"kind": "List"}, true); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "kind: List\n" {
		t.Errorf("a single document: %q, want no leading ---", got)
	}
	if err := writeYAML(&b, map[string]any{"kind": "Pod"}, false); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "kind: List\n---\nkind: Pod\n" {
		t.Errorf("two documents: %q", got)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 objects", 1: "1 object", 2: "2 objects"} {
		if got := plural(n, "object"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
