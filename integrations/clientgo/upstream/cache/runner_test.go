package cache

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// deliberate lists the upstream tests the adapter fails on purpose, each
// with its reason; the adapter's package doc says more. TestUpstreamSuite
// fails if the adapter fails any other, or passes one of these.
var deliberate = map[string]string{
	"TestEventPanics": "a handler's panic is recovered and reported, not logged by utilruntime.HandleCrash " +
		"and crashed on; Options.CrashOnHandlerPanic restores client-go's way, and passes this test",
}

// withOption lists the upstream tests run a third time, on the adapter with
// an option that restores client-go's behaviour: they must pass there.
var withOption = map[string]string{
	"TestEventPanics": sideKinformerCrash,
}

// full also runs the deliberate differences on the adapter, to check that
// they still fail: TestEventPanics alone then waits 90 seconds for a log
// line the adapter does not write. make test-clientgo-upstream sets it.
var full = flag.Bool("upstream.full", false, "run the deliberate differences on the adapter too")

// TestUpstreamSuite runs client-go v0.37.2's shared_informer_test.go (this
// package's other tests) twice, in child processes of this test binary:
// against client-go's informer, then against the adapter. It prints both
// counts, and fails if client-go's informer fails any test or the adapter
// fails one not listed in deliberate.
func TestUpstreamSuite(t *testing.T) {
	if side() != "" {
		t.Skip("runs the suite in child processes; this is one")
	}
	results := map[string]sideResult{}
	for _, sd := range []string{sideClientGo, sideKinformer} {
		var skip []string
		if sd == sideKinformer && !*full {
			skip = slices.Sorted(maps.Keys(deliberate))
		}
		r := runSideTests(t, sd, runPattern, skip)
		results[sd] = r
		msg := fmt.Sprintf("client-go v0.37.2 shared_informer_test.go on %s: %d of %d passed", sd, len(r.passed), len(r.passed)+len(r.failed))
		if len(r.failed) > 0 {
			msg += "; failed: " + strings.Join(slices.Sorted(maps.Keys(r.failed)), ", ")
		}
		if len(skip) > 0 {
			msg += "; not run, documented differences (-upstream.full runs them): " + strings.Join(skip, ", ")
		}
		fmt.Println(msg)
	}
	if cg := results[sideClientGo]; len(cg.failed) > 0 || len(cg.passed) == 0 {
		t.Errorf("client-go's own informer fails its suite here (passed %d): %v\n%s", len(cg.passed), slices.Sorted(maps.Keys(cg.failed)), cg.output)
	}
	k := results[sideKinformer]
	for name, how := range k.failed {
		if _, ok := deliberate[name]; !ok {
			t.Errorf("the adapter fails %s (%s), not a documented difference:\n%s", name, how, k.testOutput(name))
		}
	}
	for name, why := range deliberate {
		if k.passed[name] {
			t.Errorf("the adapter passes %s, listed as a deliberate difference (%s): drop it from the list and the package doc", name, why)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(withOption)) {
		sd := withOption[name]
		if runPattern != "" && !regexp.MustCompile(runPattern).MatchString(name) {
			continue
		}
		r := runSideTests(t, sd, "^"+name+"$", nil)
		msg := fmt.Sprintf("client-go v0.37.2 shared_informer_test.go on %s: %s passed: %v", sd, name, r.passed[name])
		fmt.Println(msg)
		if !r.passed[name] {
			t.Errorf("%s fails on %s:\n%s", name, sd, r.testOutput(name))
		}
	}
	if t.Failed() && k.exitErr != nil {
		t.Logf("the adapter's run ended with %v", k.exitErr)
	}
}

type sideResult struct {
	passed map[string]bool
	// failed maps each failed test to how: "failed", "hung" (the run
	// timed out in it) or "not reported" (the run ended before it did).
	failed  map[string]string
	output  []byte
	exitErr error
}

var (
	resultLine = regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (\S+) `)
	testStart  = regexp.MustCompile(`^=== RUN   (\S+)$`)
	hungTest   = regexp.MustCompile(`^\s+(Test\S+) \(`)
)

// runSideTests runs this binary's tests matching pattern (empty: all), but
// TestUpstreamSuite and those named in skip, on one side.
func runSideTests(t *testing.T, sd, pattern string, skip []string) sideResult {
	args := []string{"-test.v", "-test.count=1", "-test.timeout=150s"}
	if pattern != "" {
		args = append(args, "-test.run="+pattern)
	}
	if len(skip) > 0 {
		args = append(args, "-test.skip=^("+strings.Join(skip, "|")+")$")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), sideEnv+"="+sd)
	out, err := cmd.CombinedOutput()
	r := sideResult{passed: map[string]bool{}, failed: map[string]string{}, output: out, exitErr: err}
	started := map[string]bool{}
	timedOut := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := testStart.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], "/") && m[1] != "TestUpstreamSuite" {
			started[m[1]] = true
		}
		if m := resultLine.FindStringSubmatch(line); m != nil && m[2] != "TestUpstreamSuite" {
			switch m[1] {
			case "PASS":
				r.passed[m[2]] = true
			case "FAIL":
				r.failed[m[2]] = "failed"
			}
		}
		if strings.HasPrefix(line, "panic: test timed out") {
			timedOut = true
		}
		if m := hungTest.FindStringSubmatch(line); timedOut && m != nil && !strings.Contains(m[1], "/") {
			r.failed[m[1]] = "hung"
		}
	}
	for name := range started {
		if _, ok := r.failed[name]; !ok && !r.passed[name] {
			r.failed[name] = "not reported"
		}
	}
	if err != nil && len(r.failed) == 0 {
		// Every test passed but the run failed: leaked goroutines, or
		// output this parser does not know.
		t.Errorf("%s side: run failed with %v although every test passed:\n%s", sd, err, out)
	}
	return r
}

// testOutput returns the lines of the run's output from name's start to its
// result.
func (r sideResult) testOutput(name string) string {
	s := string(r.output)
	i := strings.Index(s, "=== RUN   "+name+"\n")
	if i < 0 {
		return s
	}
	s = s[i:]
	if j := strings.Index(s, "--- FAIL: "+name+" "); j >= 0 {
		if k := strings.IndexByte(s[j:], '\n'); k >= 0 {
			return s[:j+k]
		}
	}
	return s
}
