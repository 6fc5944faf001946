// Package cache holds the storage layer every informer stands on: key
// functions, thread-safe stores and indexers, the tombstone for a deletion
// whose final state was missed, and the queues (FIFO, DeltaFIFO) that sit
// between a reflector and the code that processes its changes.
//
// Everything here is generic over the stored type T, which must satisfy
// [Object]. Objects handed out by a store are shared with every other reader
// and must not be mutated; copy them first.
package cache
