// This program must not compile: it writes to an informer's cache through
// the read-only view. TestCacheCannotBeWrittenThrough builds it and expects
// one error per write.
package main

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/informer"
)

func main() {
	inf, _ := informer.NewShared(informer.Options[*corev1.Pod]{})
	view := inf.Cache()
	pod := &corev1.Pod{}
	_ = view.Add(pod)
	_ = view.Update(pod)
	_ = view.Delete(pod)
	_ = view.Replace(nil)
	_ = view.AddIndexers(nil)
	var anyView any = view
	_ = anyView.(interface{ Add(*corev1.Pod) error }).Add(pod) // compiles, but panics: see the test
}
