package controllerruntime

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// New returns a controller-runtime cache backed by kinformer informers. It has
// the signature of cache.NewCacheFunc, so a manager takes it as is:
//
//	mgr, err := manager.New(cfg, manager.Options{NewCache: controllerruntime.New})
//
// It reads the same Options as controller-runtime's cache.New and gives them
// the same meaning: Scheme, Mapper and HTTPClient (defaulted the same way),
// SyncPeriod, DefaultNamespaces, DefaultLabelSelector, DefaultFieldSelector,
// DefaultTransform, DefaultUnsafeDisableDeepCopy, DefaultWatchErrorHandler,
// ReaderFailOnMissingInformer and ByObject (namespaces, selectors,
// transform, deep copy, sync period). Defaults are resolved in
// controller-runtime's order: ByObject, then DefaultNamespaces[namespace],
// then the Default* fields. EnableWatchBookmarks settings are accepted and
// not needed: kinformer's informers always ask for bookmarks. NewInformer,
// when set, makes every informer of the cache, as in controller-runtime:
// kinformer's informers are then not used (see the package doc).
func New(cfg *rest.Config, opts crcache.Options) (crcache.Cache, error) {
	return newCache(cfg, opts, nil)
}

// newCache is New with the opt-ins ext of NewCache (nil for none).
func newCache(cfg *rest.Config, crOpts crcache.Options, ext *extensions) (crcache.Cache, error) {
	resolved, err := defaults(cfg, crOpts)
	if err != nil {
		return nil, err
	}
	if ext != nil {
		if err := ext.resolveShards(resolved); err != nil {
			return nil, err
		}
	}
	opts := cacheOptions{Options: resolved, ext: ext}
	var defaultCache crcache.Cache
	globals := globalConfig(opts.Options)
	if len(opts.DefaultNamespaces) > 0 {
		defaultCache = newMultiNamespaceCache(cfg, opts, opts.DefaultNamespaces, &globals)
	} else {
		defaultCache = newInformerCache(cfg, opts, globals, metav1.NamespaceAll)
	}
	if len(opts.ByObject) == 0 {
		return defaultCache, nil
	}
	d := &delegatingCache{scheme: opts.Scheme, byGVK: map[schema.GroupVersionKind]crcache.Cache{}, fallback: defaultCache}
	for obj, by := range opts.ByObject {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			return nil, fmt.Errorf("failed to get GVK for type %T: %w", obj, err)
		}
		if len(by.Namespaces) > 0 {
			d.byGVK[gvk] = newMultiNamespaceCache(cfg, opts, by.Namespaces, nil)
		} else {
			d.byGVK[gvk] = newInformerCache(cfg, opts, byObjectConfig(by), metav1.NamespaceAll)
		}
	}
	return d, nil
}

func globalConfig(opts crcache.Options) crcache.Config {
	return crcache.Config{
		LabelSelector:         opts.DefaultLabelSelector,
		FieldSelector:         opts.DefaultFieldSelector,
		Transform:             opts.DefaultTransform,
		UnsafeDisableDeepCopy: opts.DefaultUnsafeDisableDeepCopy,
		EnableWatchBookmarks:  opts.DefaultEnableWatchBookmarks,
		SyncPeriod:            opts.SyncPeriod,
	}
}

func byObjectConfig(by crcache.ByObject) crcache.Config {
	return crcache.Config{
		LabelSelector:         by.Label,
		FieldSelector:         by.Field,
		Transform:             by.Transform,
		UnsafeDisableDeepCopy: by.UnsafeDisableDeepCopy,
		EnableWatchBookmarks:  by.EnableWatchBookmarks,
		SyncPeriod:            by.SyncPeriod,
	}
}

// fillFrom sets every unset field of c from from.
func fillFrom(c, from crcache.Config) crcache.Config {
	if c.LabelSelector == nil {
		c.LabelSelector = from.LabelSelector
	}
	if c.FieldSelector == nil {
		c.FieldSelector = from.FieldSelector
	}
	if c.Transform == nil {
		c.Transform = from.Transform
	}
	if c.UnsafeDisableDeepCopy == nil {
		c.UnsafeDisableDeepCopy = from.UnsafeDisableDeepCopy
	}
	if c.EnableWatchBookmarks == nil {
		c.EnableWatchBookmarks = from.EnableWatchBookmarks
	}
	if c.SyncPeriod == nil {
		c.SyncPeriod = from.SyncPeriod
	}
	return c
}

// defaults fills in what the options leave out, as controller-runtime's
// cache.New does: an HTTP client, client-go's scheme, a dynamic REST mapper,
// each ByObject's namespaces and settings from the defaults, and for a
// namespace entry "" (all namespaces) a field selector excluding the
// namespaces listed beside it.
func defaults(cfg *rest.Config, opts crcache.Options) (crcache.Options, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if opts.HTTPClient == nil {
		c, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return opts, fmt.Errorf("could not create HTTP client from config: %w", err)
		}
		opts.HTTPClient = c
	}
	if opts.Scheme == nil {
		opts.Scheme = scheme.Scheme
	}
	if opts.Mapper == nil {
		m, err := apiutil.NewDynamicRESTMapper(cfg, opts.HTTPClient)
		if err != nil {
			return opts, fmt.Errorf("could not create RESTMapper from config: %w", err)
		}
		opts.Mapper = m
	}
	opts.Mapper = withViews(opts.Mapper) // view types (AddView) map to their full types
	globals := globalConfig(opts)
	opts.ByObject = maps.Clone(opts.ByObject)
	opts.DefaultNamespaces = maps.Clone(opts.DefaultNamespaces)
	for obj, by := range opts.ByObject {
		namespaced, err := apiutil.IsObjectNamespaced(obj, opts.Scheme, opts.Mapper)
		if err != nil {
			return opts, fmt.Errorf("failed to determine if %T is namespaced: %w", obj, err)
		}
		if !namespaced && by.Namespaces != nil {
			return opts, fmt.Errorf("type %T is not namespaced, but its ByObject.Namespaces setting is not nil", obj)
		}
		if namespaced && by.Namespaces == nil {
			by.Namespaces = maps.Clone(opts.DefaultNamespaces)
		} else {
			by.Namespaces = maps.Clone(by.Namespaces)
		}
		for ns, c := range by.Namespaces {
			c = fillFrom(c, byObjectConfig(by))
			if nsDefaults, ok := opts.DefaultNamespaces[ns]; ok {
				c = fillFrom(c, nsDefaults)
			}
			c = fillFrom(c, globals)
			if ns == metav1.NamespaceAll {
				c.FieldSelector = excludeOthers(by.Namespaces, c.FieldSelector)
			}
			by.Namespaces[ns] = c
		}
		if !namespaced || len(by.Namespaces) == 0 {
			c := fillFrom(byObjectConfig(by), globals)
			by.Label, by.Field, by.Transform = c.LabelSelector, c.FieldSelector, c.Transform
			by.UnsafeDisableDeepCopy, by.EnableWatchBookmarks, by.SyncPeriod = c.UnsafeDisableDeepCopy, c.EnableWatchBookmarks, c.SyncPeriod
		}
		opts.ByObject[obj] = by
	}
	for ns, c := range opts.DefaultNamespaces {
		c = fillFrom(c, globals)
		if ns == metav1.NamespaceAll {
			c.FieldSelector = excludeOthers(opts.DefaultNamespaces, c.FieldSelector)
		}
		opts.DefaultNamespaces[ns] = c
	}
	return opts, nil
}

// excludeOthers returns sel ANDed with metadata.namespace!=N for every named
// namespace N of namespaces: the "all namespaces" entry caches the rest.
func excludeOthers(namespaces map[string]crcache.Config, sel fields.Selector) fields.Selector {
	names := slices.Sorted(maps.Keys(namespaces))
	var parts []fields.Selector
	for _, ns := range names {
		if ns != metav1.NamespaceAll {
			parts = append(parts, fields.OneTermNotEqualSelector("metadata.namespace", ns))
		}
	}
	if sel != nil {
		parts = append(parts, sel)
	}
	return fields.AndSelectors(parts...)
}
