package scenario

import (
	"crypto/sha256"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// A command that fails or outlives its timeout is a run that did not
// finish, with its figures and what it printed; one that cannot start
// stops the bench.
func TestMeasureCommandReportsUnfinishedRuns(t *testing.T) {
	dir := t.TempDir()
	r, err := measureCommand(t.Context(), time.Minute, "sh", []string{"-c", "echo partial; echo broken >&2; exit 3"}, filepath.Join(dir, "fail.out"), false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.failed, "exit status 3") || !strings.Contains(r.failed, "broken") || r.bytes != int64(len("partial\n")) || r.rssMB <= 0 {
		t.Errorf("failing command: %+v, want its exit status, its stderr, the 8 bytes printed and a peak RSS", r)
	}
	r, err = measureCommand(t.Context(), 200*time.Millisecond, "sh", []string{"-c", "echo started; exec sleep 30"}, filepath.Join(dir, "slow.out"), false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.failed, "killed after the 200ms timeout") || r.bytes != int64(len("started\n")) {
		t.Errorf("slow command: %+v, want it killed at the timeout with what it printed", r)
	}
	if _, err := measureCommand(t.Context(), time.Minute, filepath.Join(dir, "no-such-command"), nil, filepath.Join(dir, "none.out"), false); err == nil {
		t.Error("a command that cannot start: no error")
	}
}
