package source

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
)

// Metadata returns a source of the objects of any resource (built-in,
// custom or aggregated) reduced to their metadata, for callers that need
// only names, labels, annotations, owners and versions. The server does the
// reduction, so far fewer bytes cross the wire and stay in memory.
//
// It asks for PartialObjectMetadata as protobuf, then as JSON; a server
// that ignores the conversion and answers full JSON objects is handled too.
// Objects carry apiVersion meta.k8s.io/v1 and kind PartialObjectMetadata.
//
// A non-empty opts.Namespace means gvr is namespaced. cfg is copied. T
// must be *metav1.PartialObjectMetadata (another type is an error): the
// caller, generic in T, gets the source it asked for as it is.
func Metadata[T cache.Object](cfg *rest.Config, gvr schema.GroupVersionResource, opts Options) (*Source[T], error) {
	c, err := structCodec[T](metadataBuiltin(), acceptMetadataList, acceptMetadataWatch, true)
	if err != nil {
		return nil, err
	}
	return newSource(cfg, gvr, true, opts, c)
}
