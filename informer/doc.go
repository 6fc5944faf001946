// Package informer turns a source of objects into a local, indexed cache
// plus change notifications.
//
// [Controller] is the plain informer: one reflector keeps a DeltaFIFO
// filled from the source, and one pop loop applies the queued changes to
// an indexer and tells one [Handler] about each, in order. The shared
// informer, its factory and listers, built on the same pieces, serve many
// handlers from one cache.
//
// Objects handed to handlers and read from an informer's indexer are
// shared with every other reader and must not be mutated; copy them first.
package informer
