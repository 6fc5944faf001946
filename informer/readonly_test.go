package informer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/listwatch/fake"
)

// goBuild builds the program in dir with the go command running this test
// and returns its combined output and error.
func goBuild(t *testing.T, dir string) (string, error) {
	t.Helper()
	goTool := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("no go command to build with")
		}
	}
	cmd := exec.Command(goTool, "build", "-o", os.DevNull, "./"+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCacheCannotBeWrittenThrough proves that the compiler, not a comment,
// keeps a handler from writing to an informer's cache: a program that
// calls each write method on Cache() fails to build, with one error per
// call, while the same program reading through it builds.
func TestCacheCannotBeWrittenThrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	if out, err := goBuild(t, "testdata/readonly/read"); err != nil {
		t.Fatalf("the reading program does not build: %v\n%s", err, out)
	}
	out, err := goBuild(t, "testdata/readonly/write")
	if err == nil {
		t.Fatal("a program writing through Cache() built")
	}
	for _, method := range []string{"Add", "Update", "Delete", "Replace", "AddIndexers"} {
		if !strings.Contains(out, "has no field or method "+method) {
			t.Errorf("no compile error for %s; output:\n%s", method, out)
		}
	}
}

// TestCacheViewHidesTheWriterFromTypeAssertions: the view is a struct, not
// an interface holding the indexer, so no type assertion reaches a write
// method.
func TestCacheViewHidesTheWriterFromTypeAssertions(t *testing.T) {
	src, err := fake.New(fake.Options[*corev1.Pod]{})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := NewShared(Options[*corev1.Pod]{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	var view any = inf.Cache()
	if _, ok := view.(interface{ Add(*corev1.Pod) error }); ok {
		t.Fatal("the cache view has an Add method")
	}
}
