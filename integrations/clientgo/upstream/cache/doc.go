// Package cache holds client-go v0.37.2's tools/cache/shared_informer_test.go,
// copied unchanged with its license header, and runs it against client-go's
// shared informer and against this module's adapter (clientgo.New):
//
//	go test -v ./upstream/cache/                      # both counts, in about a minute
//	go test -v ./upstream/cache/ -args -upstream.full # also the documented differences (3 minutes)
//
// The test keeps the package name and the package-internal names it uses
// upstream (NewSharedInformer, *sharedIndexInformer and the fields it reads);
// the shim (shim_test.go, inspect_test.go, source_test.go) provides them for
// the side under test, chosen by the environment variable
// KINFORMER_UPSTREAM_SIDE. Without it, TestUpstreamSuite runs the file once
// per side in child processes, prints the counts, and fails if client-go's
// informer fails a test or the adapter fails one its package doc does not
// list as a deliberate difference. util_test.go is client-go's helper file of
// the same name. The package has no code of its own.
package cache
