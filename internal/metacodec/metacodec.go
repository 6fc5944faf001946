// Package metacodec holds the serializer of kinformer's REST clients
// (rest.Config.NegotiatedSerializer). Those clients read bodies as bytes
// and decode objects themselves; the serializer only has to turn an error
// answer into its metav1.Status (rest.Result.Error), so it knows
// apimachinery's meta types and no API group.
//
// client-go's kubernetes/scheme would do the same job, but linking it links
// and initializes every API group, which is most of an idle process's
// resident set: process-baseline-rss in bench/ (cmd/baseline) is the
// benchmark that pays for this package.
package metacodec

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// metaScheme registers metav1's types under the core version, "v1", as
// client-go's kubernetes/scheme does: the apiserver sends a Status as
// apiVersion v1, in JSON or protobuf.
var metaScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// Serializer is the NegotiatedSerializer for a rest.Config: JSON, YAML and
// protobuf, without conversion, knowing only metav1's types.
var Serializer = serializer.NewCodecFactory(metaScheme).WithoutConversion()
