package cache_test

// This file is kinformer's, not controller-runtime's: it chooses the cache the
// copied suite builds and points envtest at the local control plane. The
// other _test.go files of this directory are controller-runtime's.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	kcr "github.com/kinformer/kinformer/integrations/controllerruntime"
	kenv "github.com/kinformer/kinformer/testenv"
)

// sideEnv names the cache one run of the suite builds: "kinformer" or
// "controller-runtime". Unset, TestMain runs the suite once per side, each in
// a process of its own (Ginkgo runs one suite per process), and fails if
// either fails.
const sideEnv = "KINFORMER_UPSTREAM_CACHE"

var sides = []string{"kinformer", "controller-runtime"}

// newCache is where the suite builds every cache it tests, in place of
// controller-runtime's cache.New.
func newCache(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	switch side := os.Getenv(sideEnv); side {
	case "controller-runtime":
		return cache.New(cfg, opts)
	case "kinformer":
		return kcr.New(cfg, opts)
	default:
		return nil, fmt.Errorf("%s=%q: want kinformer or controller-runtime", sideEnv, side)
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(sideEnv) == "" {
		os.Exit(runBothSides())
	}
	// envtest (the suite's BeforeSuite) finds etcd and kube-apiserver in
	// KUBEBUILDER_ASSETS: the local control plane's binaries, built by
	// `make controlplane` and cached.
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
		dir, err := kenv.WriteAssets(ctx, kenv.AssetsOptions{Build: kenv.BuildOptions{Progress: os.Stderr}})
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "upstream cache suite: control plane binaries:", err)
			os.Exit(1)
		}
		os.Setenv("KUBEBUILDER_ASSETS", dir)
	}
	goleak.VerifyTestMain(m,
		// Ginkgo's interrupt handler outlives RunSpecs.
		goleak.IgnoreTopFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"),
		// controller-runtime's own cache (the reference) leaves these
		// behind: a multi-namespace informer's stop goroutine and the
		// filter of a stopped metadata watch blocked on its send.
		goleak.IgnoreTopFunction("sigs.k8s.io/controller-runtime/pkg/cache.newMultiNamespaceInformer.func1"),
		goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"),
	)
}

// summary matches Ginkgo's count lines ("Ran 272 of 272 Specs in 64.2
// seconds", "FAIL! -- 262 Passed | 10 Failed | ...") and the results of the
// suite's plain tests; color is the terminal escapes Ginkgo colors them with.
var (
	summary = regexp.MustCompile(`^(Ran \d+ of \d+ Specs.*|(SUCCESS|FAIL)! .*|--- (PASS|FAIL): Test\w+ .*)$`)
	color   = regexp.MustCompile("\x1b\\[[0-9;]*m")
)

// runBothSides reruns this test binary with the same arguments once per
// side, passes their output through, and prints each side's counts at the
// end. It returns the exit code: 0 if both passed.
func runBothSides() int {
	code := 0
	var counts []string
	for _, side := range sides {
		cmd := exec.Command(os.Args[0], os.Args[1:]...)
		cmd.Env = append(os.Environ(), sideEnv+"="+side)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		counts = append(counts, collect(side, out)...)
		if err := cmd.Wait(); err != nil {
			counts = append(counts, fmt.Sprintf("%s: %v", side, err))
			code = 1
		}
	}
	fmt.Println("controller-runtime's pkg/cache suite, per cache:")
	for _, c := range counts {
		fmt.Println("  " + c)
	}
	return code
}

// collect copies r to stdout and returns its summary lines prefixed by side.
func collect(side string, r io.Reader) []string {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		l := sc.Text()
		fmt.Println(l)
		if plain := color.ReplaceAllString(l, ""); summary.MatchString(plain) {
			lines = append(lines, side+": "+plain)
		}
	}
	return lines
}
