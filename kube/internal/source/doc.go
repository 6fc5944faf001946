// Package source is the machinery behind the kube package's sources: one
// REST client per resource, and the codecs that turn what the apiserver
// sends (protobuf or JSON lists, watch streams, Status errors) into Go
// values: built-in types from protobuf (strings interned, cached objects
// reused on a relist), unstructured objects, metadata-only objects, and
// projected views of built-in types and of custom resources. Package kube
// picks a constructor from the type argument of its one door
// (kube.Informer, Acquire, Source); nothing here is public API.
//
// Objects returned by List and Watch are owned by the caller; a source
// keeps no reference to them as a whole (see package kube's documentation
// for interning and shared parts).
package source
