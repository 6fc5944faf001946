package controllerruntime_test

import (
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
)

// The one-line switch: a manager whose cache is kinformer's. Everything else
// — controllers, clients, options such as cache.Options.ByObject — stays as
// it is. (It needs a cluster, so it is compiled, not run; package podsummary
// and go run ./example run it on a local control plane.)
func ExampleNew() {
	var cfg *rest.Config // from ctrl.GetConfigOrDie(), say
	mgr, err := manager.New(cfg, manager.Options{
		NewCache: controllerruntime.New,
		Cache:    cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		return
	}
	_ = mgr // add controllers, then mgr.Start(ctx)
}
