package controllerruntime

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Get reads the object under key into out: a deep copy of the cached object,
// unless deep copies are disabled (then out shares the cached object's
// fields, which must not be mutated). A missing object is apierrors'
// NotFound; a read before Start is *cache.ErrCacheNotStarted.
func (c *informerCache) Get(ctx context.Context, key client.ObjectKey, out client.Object, opts ...client.GetOption) error {
	gvk, err := apiutil.GVKForObject(out, c.scheme)
	if err != nil {
		return err
	}
	t, started, err := c.lookup(ctx, gvk, out, c.failOnMissing, crcache.InformerGetOptions{})
	if err != nil {
		return err
	}
	if !started {
		return &crcache.ErrCacheNotStarted{}
	}
	var o client.GetOptions
	o.ApplyOptions(opts)
	ns := key.Namespace
	if !t.namespaced {
		ns = ""
	}
	obj, ok := t.e.get(ns, key.Name)
	if !ok {
		// controller-runtime names the kind where the resource would be.
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	copied := !c.noDeepCopy(o.UnsafeDisableDeepCopy)
	var src runtime.Object = obj
	if copied {
		src = obj.DeepCopyObject()
	}
	outVal, srcVal := reflect.ValueOf(out), reflect.ValueOf(src)
	if !srcVal.Type().AssignableTo(outVal.Type()) {
		return fmt.Errorf("cache had type %s, but %s was asked for", srcVal.Type(), outVal.Type())
	}
	reflect.Indirect(outVal).Set(reflect.Indirect(srcVal))
	if copied {
		out.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return nil
}

func (c *informerCache) noDeepCopy(perCall *bool) bool {
	return ptr.Deref(c.config.UnsafeDisableDeepCopy, false) || ptr.Deref(perCall, false)
}

// List reads the objects the options select into out: a namespace, a label
// selector, a field selector of exact matches on indexes made by IndexField
// (client.MatchingFields), and Limit (the first objects found; the cache has
// no order). Continue is not supported, as in controller-runtime's cache.
func (c *informerCache) List(ctx context.Context, out client.ObjectList, opts ...client.ListOption) error {
	gvk, cacheObj, err := cacheTypeFor(out, c.scheme)
	if err != nil {
		return err
	}
	t, started, err := c.lookup(ctx, gvk, cacheObj, c.failOnMissing, crcache.InformerGetOptions{})
	if err != nil {
		return err
	}
	if !started {
		return &crcache.ErrCacheNotStarted{}
	}
	var o client.ListOptions
	o.ApplyOptions(opts)
	if o.Continue != "" {
		return errors.New("continue list option is not supported by the cache")
	}
	var objs []client.Object
	switch {
	case o.FieldSelector != nil:
		if !exactMatches(o.FieldSelector) {
			return errors.New("non-exact field matches are not supported by the cache")
		}
		objs, err = byIndexes(t.e, o.FieldSelector.Requirements(), o.Namespace)
	default:
		objs = t.e.list(o.Namespace)
	}
	if err != nil {
		return err
	}
	copied := !c.noDeepCopy(o.UnsafeDisableDeepCopy)
	items := make([]runtime.Object, 0, len(objs))
	for _, obj := range objs {
		if o.Limit > 0 && int64(len(items)) >= o.Limit {
			break
		}
		if o.LabelSelector != nil && !o.LabelSelector.Matches(labelsOf(obj)) {
			continue
		}
		var item runtime.Object = obj
		if copied {
			item = obj.DeepCopyObject()
			item.GetObjectKind().SetGroupVersionKind(gvk)
		}
		items = append(items, item)
	}
	if err := apimeta.SetList(out, items); err != nil {
		return err
	}
	out.SetContinue("continue-not-supported")
	return nil
}

// exactMatches reports whether every requirement of s is an equality.
func exactMatches(s fields.Selector) bool {
	for _, r := range s.Requirements() {
		if r.Operator != selection.Equals && r.Operator != selection.DoubleEquals {
			return false
		}
	}
	return true
}

// byIndexes returns the objects matching every requirement: the first
// through its index, the others by running their index functions on those.
func byIndexes(e entry, reqs fields.Requirements, namespace string) ([]client.Object, error) {
	var objs []client.Object
	for i, r := range reqs {
		index, value := fieldIndexName(r.Field), namespacedValue(namespace, r.Value)
		if i == 0 {
			var err error
			if objs, err = e.byIndex(index, value); err != nil || len(objs) == 0 {
				return nil, err
			}
			continue
		}
		kept := objs[:0:0]
		for _, obj := range objs {
			ok, err := e.indexed(index, value, obj)
			if err != nil {
				return nil, err
			}
			if ok {
				kept = append(kept, obj)
			}
		}
		if len(kept) == 0 {
			return nil, nil
		}
		objs = kept
	}
	return objs, nil
}
