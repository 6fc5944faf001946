package cache

import (
	"flag"
	"regexp"
	"testing"

	"go.uber.org/goleak"
)

// runPattern is the -run pattern given to the parent, handed on to the
// children; empty (every test) when it selects TestUpstreamSuite itself.
var runPattern string

// TestMain checks for leaked goroutines, as client-go's does. Without a side
// chosen (sideEnv), it runs TestUpstreamSuite alone, which runs the other
// tests once per side in child processes.
func TestMain(m *testing.M) {
	if side() == "" {
		flag.Parse()
		runPattern = flag.Lookup("test.run").Value.String()
		if ok, _ := regexp.MatchString(runPattern, "TestUpstreamSuite"); ok {
			runPattern = ""
		}
		if err := flag.Set("test.run", "^TestUpstreamSuite$"); err != nil {
			panic(err)
		}
	}
	goleak.VerifyTestMain(m)
}
