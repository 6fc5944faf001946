// Package cache holds, in its tests, controller-runtime v0.25.2's own
// pkg/cache test suite (cache_suite_test.go, cache_test.go and
// informer_cache_test.go, copied unchanged but for the constructor), run
// against kinformer's cache (package controllerruntime's New) and against
// controller-runtime's cache.New, each in a process of its own:
//
//	go test -count=1 -v ./upstream/cache
//
// prints Ginkgo's counts for each side at the end. KINFORMER_UPSTREAM_CACHE=kinformer
// (or controller-runtime) runs one side only. envtest starts the local
// control plane's etcd and kube-apiserver (package testenv builds them once
// and caches them; KUBEBUILDER_ASSETS, if set, names other binaries).
//
// The differences the suite finds that are deliberate are listed, with their
// reasons, in package controllerruntime's documentation.
package cache
