package controllerruntime

import (
	"context"
	"errors"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// delegatingCache sends the kinds named in Options.ByObject to caches of
// their own and every other kind to fallback.
type delegatingCache struct {
	scheme   *runtime.Scheme
	byGVK    map[schema.GroupVersionKind]crcache.Cache
	fallback crcache.Cache
}

func (d *delegatingCache) forObject(obj runtime.Object) (crcache.Cache, error) {
	gvk, err := apiutil.GVKForObject(obj, d.scheme)
	if err != nil {
		return nil, err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	return d.forKind(gvk), nil
}

func (d *delegatingCache) forKind(gvk schema.GroupVersionKind) crcache.Cache {
	if c, ok := d.byGVK[gvk]; ok {
		return c
	}
	return d.fallback
}

func (d *delegatingCache) all() []crcache.Cache {
	out := []crcache.Cache{d.fallback}
	for _, c := range d.byGVK {
		out = append(out, c)
	}
	return out
}

func (d *delegatingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c, err := d.forObject(obj)
	if err != nil {
		return err
	}
	return c.Get(ctx, key, obj, opts...)
}

func (d *delegatingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	c, err := d.forObject(list)
	if err != nil {
		return err
	}
	return c.List(ctx, list, opts...)
}

func (d *delegatingCache) GetInformer(ctx context.Context, obj client.Object, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	c, err := d.forObject(obj)
	if err != nil {
		return nil, err
	}
	return c.GetInformer(ctx, obj, opts...)
}

func (d *delegatingCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	return d.forKind(gvk).GetInformerForKind(ctx, gvk, opts...)
}

func (d *delegatingCache) RemoveInformer(ctx context.Context, obj client.Object) error {
	c, err := d.forObject(obj)
	if err != nil {
		return err
	}
	return c.RemoveInformer(ctx, obj)
}

func (d *delegatingCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	c, err := d.forObject(obj)
	if err != nil {
		return err
	}
	return c.IndexField(ctx, obj, field, extract)
}

// Start starts every cache and returns once all have returned (when ctx is
// done), with their errors joined.
func (d *delegatingCache) Start(ctx context.Context) error {
	return startAll(ctx, d.all())
}

// NeedLeaderElection returns false, as informerCache's does.
func (d *delegatingCache) NeedLeaderElection() bool { return false }

func (d *delegatingCache) WaitForCacheSync(ctx context.Context) bool {
	for _, c := range d.all() {
		if !c.WaitForCacheSync(ctx) {
			return false
		}
	}
	return true
}

// startAll runs Start of every cache on a goroutine of its own and waits for
// all of them. A cache failing to start (already started) stops the others.
func startAll(ctx context.Context, caches []crcache.Cache) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(caches))
	for i, c := range caches {
		wg.Go(func() {
			if errs[i] = c.Start(ctx); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
