package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// Tests is a package's tests run against one control plane, for its
// TestMain:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) {
//		goleak.VerifyTestMain(testenv.Tests{M: m, Name: "mypkg", Env: &env})
//	}
//
// Run builds the control plane (the first build takes minutes and shows
// its progress on stderr), starts it with Options, stores it in *Env,
// runs the tests, closes the idle connections of its clients (so a leak
// check sees none) and stops it.
type Tests struct {
	M *testing.M
	// Name prefixes the messages of a failed start or stop.
	Name string
	// Options start the control plane; Binaries is filled in.
	Options Options
	// Env receives the running control plane.
	Env **Env
}

// Run implements goleak.TestingM: it returns the exit code.
func (t Tests) Run() int {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	bins, err := Build(ctx, BuildOptions{Progress: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: build control plane: %v\n", t.Name, err)
		return 1
	}
	opts := t.Options
	opts.Binaries = bins
	env, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: start control plane: %v\n", t.Name, err)
		return 1
	}
	*t.Env = env
	code := t.M.Run()
	if c, err := rest.HTTPClientFor(env.RESTConfig()); err == nil && c.Transport != nil {
		utilnet.CloseIdleConnectionsFor(c.Transport)
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: stop control plane: %v\n", t.Name, err)
		code = 1
	}
	return code
}
