package scenario

import (
	"fmt"
	"os"
	"testing"
)

// childTestEnv makes the test binary, run by
// TestRunChildJSONPassesLinesAndResult, act as a child.
const childTestEnv = "KINFORMER_BENCH_TEST_CHILD"

func TestChildJSONHelper(t *testing.T) {
	if os.Getenv(childTestEnv) == "" {
		t.Skip("only runs as the child of TestRunChildJSONPassesLinesAndResult")
	}
	fmt.Println("ready")
	fmt.Println(`{"objects": 3, "digest": "d"}`)
	os.Exit(0)
}

func TestRunChildJSONPassesLinesAndResult(t *testing.T) {
	var lines []string
	res, ps, err := runChildJSON[MemResult](t.Context(), childRun{
		args:   []string{os.Args[0], "-test.run=^TestChildJSONHelper$"},
		env:    childEnv(childTestEnv, "1"),
		onLine: func(l string) error { lines = append(lines, l); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Objects != 3 || res.Digest != "d" || ps == nil {
		t.Errorf("result %+v, state %v", res, ps)
	}
	if len(lines) != 1 || lines[0] != "ready" {
		t.Errorf("lines %q, want [ready]", lines)
	}
	_, _, err = runChildJSON[MemResult](t.Context(), childRun{
		args:   []string{os.Args[0], "-test.run=^TestChildJSONHelper$"},
		env:    childEnv(childTestEnv, "1"),
		onLine: func(string) error { return fmt.Errorf("refused") },
	})
	if err == nil || err.Error() != "refused" {
		t.Errorf("an onLine error came back as %v", err)
	}
}
