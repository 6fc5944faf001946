package testenv

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"path"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// StoredObject is an object StoreObjects can write: a built-in type of client-go's scheme.
type StoredObject interface {
	runtime.Object
	metav1.Object
}

// storeBatch bounds one etcd transaction of StoreObjects: etcd takes at most 128 operations
// (--max-txn-ops) and 1.5 MiB (--max-request-bytes) per request, and the JSON gateway
// sends values in base64.
const (
	storeBatchOps   = 100
	storeBatchBytes = 768 << 10
)

// DefaultStoreWorkers is how many transactions StoreObjects keeps in flight when
// BulkOptions.Workers is 0: encoding, not etcd, is the bottleneck on a small machine.
const DefaultStoreWorkers = 4

// StoreObjects writes n objects, obj(0) to obj(n-1), straight into etcd, the way the
// apiserver stores them: protobuf (the "k8s\x00" envelope with apiVersion and kind), under
// /registry/RESOURCE/NAMESPACE/NAME (RESOURCE/NAME for cluster-scoped objects), without a
// resource version, in transactions of up to 100 objects, BulkOptions.Workers of them at a
// time (0: DefaultStoreWorkers), then one write outside /registry. It returns once all are
// written or at the first error; a list without a resource version made after it returns
// sees every object.
//
// It is how tests and benchmarks seed many objects fast: about two orders of magnitude faster
// than creating them through the API on a small machine. Nothing the API does on a create
// happens: no defaulting, validation, admission, managedFields, uid or creation timestamp;
// the caller sets whatever of that the objects should carry (typically copied from an object
// created through the API). An object that exists is overwritten. The apiserver sees the
// writes through its watch on etcd, as it sees another apiserver's: its watch cache and every
// watch get them as events. The objects of one transaction share a resource version, which
// the apiserver's own writes never do: a watch that ends among them and resumes at that
// version misses the rest, so seed before watching. Only resources stored under their plain
// resource name work (core resources such as pods, config maps and secrets; not those the
// apiserver stores under another name).
func (e *Env) StoreObjects(ctx context.Context, resource string, n int, obj func(i int) StoredObject, opts BulkOptions) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return fmt.Errorf("store objects: %w", ErrStopped)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = DefaultStoreWorkers
	}
	batches := (n + storeBatchOps - 1) / storeBatchOps
	err := Parallel(ctx, batches, workers, func(ctx context.Context, b int) error {
		var ops []map[string]any
		size := 0
		flush := func() error {
			if len(ops) == 0 {
				return nil
			}
			req := map[string]any{"success": ops}
			ops, size = nil, 0
			if err := e.etcdAPI.call(ctx, http.MethodPost, "/v3/kv/txn", req, &struct{}{}); err != nil {
				return fmt.Errorf("testenv: store %s: %w", resource, err)
			}
			return nil
		}
		for i := b * storeBatchOps; i < min(n, (b+1)*storeBatchOps); i++ {
			key, value, err := storageEncode(resource, obj(i))
			if err != nil {
				return err
			}
			if size+len(key)+len(value) > storeBatchBytes {
				if err := flush(); err != nil {
					return err
				}
			}
			size += len(key) + len(value)
			ops = append(ops, map[string]any{"requestPut": map[string]any{
				"key":   base64.StdEncoding.EncodeToString([]byte(key)),
				"value": base64.StdEncoding.EncodeToString(value),
			}})
		}
		return flush()
	})
	if err != nil {
		return err
	}
	return e.etcdAPI.markStored(ctx)
}

// storedMarkKey is the etcd key StoreObjects writes last, outside the apiserver's
// /registry.
const storedMarkKey = "kinformer-testenv/stored"

// markStored writes storedMarkKey, so that etcd's revision moves past the transactions just
// made. The apiserver's watch cache applies a transaction's objects one event at a time, all
// at its revision, and a consistent read from the cache may start once the cache has reached
// that revision, with some of the objects still unapplied (a list after StoreObjects missed
// up to a transaction's objects, 4 lists in 40). A consistent read wants the revision etcd
// has when it starts. After this write, that revision belongs to no object the cache
// watches, so the cache can only learn of it from a progress notification, which etcd sends
// after every earlier event.
func (c *etcdClient) markStored(ctx context.Context) error {
	put := map[string]any{
		"key":   base64.StdEncoding.EncodeToString([]byte(storedMarkKey)),
		"value": base64.StdEncoding.EncodeToString([]byte("1")),
	}
	if err := c.call(ctx, http.MethodPost, "/v3/kv/put", put, &struct{}{}); err != nil {
		return fmt.Errorf("testenv: store objects: final mark: %w", err)
	}
	return nil
}

// storageEncode returns the etcd key and value the apiserver uses for obj of resource.
func storageEncode(resource string, obj StoredObject) (string, []byte, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return "", nil, fmt.Errorf("testenv: store %s: %w", resource, err)
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return "", nil, fmt.Errorf("testenv: store %s: no protobuf serializer", resource)
	}
	rv := obj.GetResourceVersion()
	obj.SetResourceVersion("") // the apiserver never stores it: it is etcd's revision
	value, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, gvks[0].GroupVersion()), obj)
	obj.SetResourceVersion(rv)
	if err != nil {
		return "", nil, fmt.Errorf("testenv: store %s %s/%s: %w", resource, obj.GetNamespace(), obj.GetName(), err)
	}
	key := path.Join("/registry", resource, obj.GetNamespace(), obj.GetName())
	return key, value, nil
}
