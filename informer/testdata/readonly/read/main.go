// This program must compile: it only reads an informer's cache. It is the
// control of TestCacheCannotBeWrittenThrough.
package main

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/informer"
)

func main() {
	inf, _ := informer.NewShared(informer.Options[*corev1.Pod]{})
	view := inf.Cache()
	_, _, _ = view.GetByKey("ns/name")
	_, _ = view.GetByNamespaceName("ns", "name")
	_ = view.List()
	_ = view.ListKeys()
	_ = view.Len()
	_, _ = view.ByIndex("namespace", "ns")
}
