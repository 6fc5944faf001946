package kube

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/kube/internal/source"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
)

// Selection says which objects of a resource are listed, watched and
// cached. The zero value is every object in every namespace. It is set in
// one place for each source: SourceOptions for a source made by hand,
// InformerOptions for one a Factory makes (where it is part of the Key).
type Selection struct {
	// Namespace restricts a namespaced resource to one namespace. It is
	// ignored for cluster-scoped resources (as client-go's factory does),
	// except by a source made by hand (Source) of a type that serves any
	// resource (*unstructured.Unstructured, *metav1.PartialObjectMetadata,
	// a view of a custom resource), for which a non-empty Namespace means
	// the resource is namespaced.
	Namespace string
	// LabelSelector and FieldSelector filter objects on the server, in its
	// string syntax ("app=web,tier!=db", "spec.nodeName=n1").
	LabelSelector string
	FieldSelector string
	// Shard, when not zero, keeps only the objects in these ranges of the
	// hash of their uid or namespace (KEP-5866; see package shard). It is
	// sent as shardSelector on every list and watch; a server that
	// applies it says so in its lists, and one that does not (feature gate
	// ShardedListAndWatch off, or older than 1.36) sends every object,
	// which the source then drops itself before anyone sees it: the same
	// objects are cached either way, but filtering on the client side
	// saves memory, not bandwidth. The source logs which it is, once and
	// on every change, and reports it in metrics.ShardMetrics.
	Shard shard.Set
}

// Validate parses both selectors and returns an error naming the one that
// does not parse, so that a typo is reported before any request is made
// rather than as a failing watch.
func (s Selection) Validate() error {
	if _, err := labels.Parse(s.LabelSelector); err != nil {
		return fmt.Errorf("label selector %q: %w", s.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(s.FieldSelector); err != nil {
		return fmt.Errorf("field selector %q: %w", s.FieldSelector, err)
	}
	return nil
}

// String renders the selection the way kubectl's flags would give it, for
// logs and keys: "-n shop app=web --field-selector spec.nodeName=n1
// --shard uid:0x…-0x…" (the label selector bare), leaving out what is
// empty; "" for the zero Selection.
func (s Selection) String() string {
	var parts []string
	if s.Namespace != "" {
		parts = append(parts, "-n "+s.Namespace)
	}
	if s.LabelSelector != "" {
		parts = append(parts, s.LabelSelector)
	}
	if s.FieldSelector != "" {
		parts = append(parts, "--field-selector "+s.FieldSelector)
	}
	if !s.Shard.IsZero() {
		parts = append(parts, "--shard "+s.Shard.String())
	}
	return strings.Join(parts, " ")
}

// SourceOptions configure a source made by hand (Source). The zero value
// means every object of the resource T is served as, in every namespace.
type SourceOptions struct {
	// Resource names the resource, for the types that can serve any
	// (*unstructured.Unstructured, *metav1.PartialObjectMetadata, a view
	// of a custom resource), typically from Resolve. For a built-in type,
	// or a view of one (ViewOf), it may be left zero: the type says which
	// resource; when set it must be that one.
	Resource Resource
	// Selection says which objects are listed and watched. The selectors
	// are combined (AND) with those of each List or Watch call.
	Selection
	// HTTPClient, when set, carries every request (it must come from
	// rest.HTTPClientFor of the same config). A factory passes one client
	// to all its sources so they share connections even when client-go
	// cannot cache the config's transport (custom Dial, WrapTransport,
	// exec credentials). nil: rest.HTTPClientFor(cfg).
	HTTPClient *http.Client
	// DisableInterning turns off, for a source of a built-in type, the
	// interning of strings: by default each string of a decoded object's
	// metadata, and of the pod spec and status it holds, is replaced by an
	// equal one an earlier object got (label keys and values, images,
	// owner names, ...). Go strings are immutable, so this sharing is
	// invisible to callers, even to one who mutates an object. On the pods
	// of bench scenario pod-memory it saves 629 bytes per pod (10,448
	// without, 9,819 with; go test -bench Retained ./internal/intern, lines
	// plain and strings) for about 5 µs of CPU per pod. DisableInterning
	// also turns ShareMutableParts off.
	DisableInterning bool
	// ShareMutableParts makes a source of a built-in type also share
	// mutable values between the objects it decodes, when they are
	// byte-identical on the wire: managedFields' FieldsV1 (pointer and
	// bytes), container resource lists (maps), and a pod's containers,
	// init containers, volumes, tolerations, security context, affinity,
	// readiness gates, topology spread constraints and status conditions
	// (slices, structs and everything they point to), decoded once per
	// distinct encoding.
	// An in-place change to one of those (setting a field of a container,
	// a volume or a condition, changing a resource list or FieldsV1's
	// bytes) then changes every object sharing it, not just one; an
	// append copies (shared slices have no spare capacity). Turn it on
	// only when nothing mutates decoded objects without deep-copying them
	// first (the contract of objects in a cache anyway; the informer's
	// mutation detector checks it).
	//
	// Memory, bench scenario pod-memory-shared against pod-memory (20,000
	// pods of 97 Deployments with the apiserver's managedFields, synced
	// into a shared informer; min/median/max of 5 runs): 4,041/4,046/4,051
	// bytes per cached pod with it, 9,598/9,604/9,605 without (client-go:
	// 10,326/10,339/10,339). Decoding also takes less CPU: each distinct
	// container, volume or condition run is decoded once. Off by default.
	ShareMutableParts bool
	// ShardMetrics are the instruments of the shard filter, when
	// Selection.Shard is set (see metrics.ShardProvider).
	ShardMetrics metrics.ShardMetrics
}

// internal returns the options of the internal source.
func (o SourceOptions) internal() source.Options {
	return source.Options{
		Namespace:         o.Namespace,
		LabelSelector:     o.LabelSelector,
		FieldSelector:     o.FieldSelector,
		Shard:             o.Shard,
		HTTPClient:        o.HTTPClient,
		DisableInterning:  o.DisableInterning,
		ShareMutableParts: o.ShareMutableParts,
		ShardMetrics:      o.ShardMetrics,
	}
}
