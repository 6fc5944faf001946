package scenario

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// The table's outputs compare without the AGE column: two tables that
// differ only in their ages (and so in that column's width) digest alike,
// and any other difference, before or after the column, is seen.
func TestDigestOutputLeavesOutAge(t *testing.T) {
	digest := func(s string, table bool) string {
		h := sha256.New()
		if _, err := digestOutput(h, strings.NewReader(s), table); err != nil {
			t.Fatal(err)
		}
		return string(h.Sum(nil))
	}
	a := "NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE\nns-1        web-0   1/1     Running   0          5m\n"
	b := "NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE\nns-1        web-0   1/1     Running   0          12h\n"
	if digest(a, true) != digest(b, true) {
		t.Error("tables differing only in AGE digest differently")
	}
	if digest(a, false) == digest(b, false) {
		t.Error("without table, AGE was left out")
	}
	c := strings.Replace(b, "Running", "Pending", 1)
	if digest(a, true) == digest(c, true) {
		t.Error("a STATUS difference was not seen")
	}
	// AGE in the middle (-o wide): the columns after it still count.
	w1 := "NAME    AGE   IP\nweb-0   5m    10.0.0.1\n\nNAME   AGE    DATA\ncm-1   2d     3\n"
	w2 := "NAME    AGE    IP\nweb-0   100d   10.0.0.1\n\nNAME   AGE   DATA\ncm-1   9s    3\n"
	w3 := "NAME    AGE    IP\nweb-0   100d   10.0.0.2\n\nNAME   AGE   DATA\ncm-1   9s    3\n"
	if digest(w1, true) != digest(w2, true) {
		t.Error("tables with AGE before other columns, differing only in AGE, digest differently")
	}
	if digest(w1, true) == digest(w3, true) {
		t.Error("a difference after the AGE column was not seen")
	}
}
