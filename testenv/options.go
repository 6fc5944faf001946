package testenv

import "time"

// DefaultStartTimeout is Options.StartTimeout's default.
const DefaultStartTimeout = 2 * time.Minute

// Options configure a control plane started by Start. The zero value starts etcd and a
// kube-apiserver with its watch cache on and the API server's default feature gates, building
// the binaries first if they are not cached.
type Options struct {
	// Build says where the control-plane sources and the binary cache are and where build
	// progress goes. It is ignored when Binaries is set.
	Build BuildOptions

	// Binaries, when both paths are set, are run as they are and nothing is built.
	Binaries Binaries

	// DisableWatchCache starts the apiserver with --watch-cache=false, so every list and
	// watch is served by etcd directly. Tests that need CompactEtcd to turn into
	// "410 Gone" for a watch or a list at an old resource version want this: with the watch
	// cache on, the apiserver serves watches from its own event history, which etcd
	// compaction does not touch (see the package documentation).
	DisableWatchCache bool

	// FeatureGates are passed to the apiserver as --feature-gates=Name=true,...; names
	// are not checked here (the apiserver refuses unknown ones and Start reports its log).
	FeatureGates map[string]bool

	// APIServerFlags are extra kube-apiserver flags ("--name=value"), passed after testenv's
	// own, so a flag given here overrides testenv's value for it.
	APIServerFlags []string

	// EtcdFlags are extra etcd flags, passed after testenv's own like APIServerFlags.
	EtcdFlags []string

	// StartTimeout bounds how long Start waits for etcd and the apiserver to become ready
	// (not the build); 0 means DefaultStartTimeout.
	StartTimeout time.Duration
}
