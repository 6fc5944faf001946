package source

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/project"
	"github.com/kinformer/kinformer/shard"
)

// ErrInvalidView is wrapped by the error of a view type that cannot be
// read from its resource (kube.ErrInvalidView is this error).
var ErrInvalidView = errors.New("invalid view")

// View returns a source of the built-in resource served as Go type full
// (for example *corev1.Pod) whose objects are projected views of type T:
// each declared field read from its kube tag's path, decoded straight from
// protobuf (or JSON, when the server answers JSON), every other field
// skipped. T is checked against full here (see CheckView); with
// opts.Shard set T must also be a shard.Object. Views' strings are
// interned unless opts.DisableInterning; ShareMutableParts does not apply.
// cfg is copied.
//
// The ObjectCodec returned beside it is how a checkpoint keeps the
// source's views: each view as the protobuf of the fields it holds, at
// their paths in full (project.Plan.EncodeProto), read back through the
// source's own plan and string table, so that views read from a file are
// what a list would have given. Its Err says why a view cannot be kept
// so (a view decoded from JSON only, or one reading a field twice).
func View[T cache.Object](cfg *rest.Config, full reflect.Type, opts Options) (*Source[T], ObjectCodec[T], error) {
	b, plan, proto, err := compileView[T](full)
	if err != nil {
		return nil, ObjectCodec[T]{}, err
	}
	if err := viewShardable[T](opts.Shard); err != nil {
		return nil, ObjectCodec[T]{}, err
	}
	strs := viewStrings(opts)
	c := viewCodec[T](plan, b, b.gvk.GroupVersion().String(), b.gvk.Kind, proto, strs)
	s, err := newSource(cfg, b.gvk.GroupVersion().WithResource(b.resource), b.namespaced, opts, c)
	if err != nil {
		return nil, ObjectCodec[T]{}, err
	}
	return s, viewObjectCodec[T](plan, strs), nil
}

// CheckView checks view type T against the built-in type full without
// making a source: a field whose path does not exist in full, whose Go
// type cannot hold what is there, or that is exported without a kube tag
// is an error wrapping ErrInvalidView naming the view, the field and the
// path.
func CheckView[T cache.Object](full reflect.Type) error {
	_, _, _, err := compileView[T](full)
	return err
}

// compileView resolves full and compiles the plan reading it into T.
func compileView[T cache.Object](full reflect.Type) (builtin, *project.Plan, bool, error) {
	b, err := resolveBuiltin(full)
	if err != nil {
		return builtin{}, nil, false, err
	}
	if err := viewType[T](); err != nil {
		return builtin{}, nil, false, err
	}
	proto := b.itemsTag != 0 && b.listMetaTag != 0 &&
		reflect.PointerTo(b.elem).Implements(reflect.TypeFor[protoMessage]())
	plan, err := project.CompileGo(reflect.TypeFor[T](), b.elem, proto)
	if err != nil {
		return builtin{}, nil, false, fmt.Errorf("kube: %w: %w", ErrInvalidView, err)
	}
	return b, plan, proto, nil
}

// viewType checks that T is a pointer to a struct.
func viewType[T cache.Object]() error {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("kube: %w: %v is not a pointer to a struct", ErrInvalidView, t)
	}
	return nil
}

func viewShardable[T cache.Object](s shard.Set) error {
	if s.IsZero() {
		return nil
	}
	if _, ok := any(*new(T)).(shard.Object); !ok {
		return fmt.Errorf("kube: %w: %v has no GetUID, which a sharded source needs (embed kube.ViewMeta)", ErrInvalidView, reflect.TypeFor[T]())
	}
	return nil
}

func viewStrings(opts Options) *project.Strings {
	if opts.DisableInterning {
		return nil
	}
	return project.NewStrings()
}
