// Package shard says which objects of a resource belong to a shard: a set
// of ranges of the 64-bit FNV-1a hash of each object's metadata.uid (or of
// its namespace), as Kubernetes' sharded list and watch (KEP-5866, feature
// gate ShardedListAndWatch, alpha in 1.36) defines them.
//
// The hash and the selector's wire syntax are apimachinery's
// (k8s.io/apimachinery/pkg/sharding): Hash calls sharding.HashField, and
// Set.Selector renders the ranges with sharding.NewSelector, so a Set's
// membership is the apiserver's (a test against a real apiserver pins it,
// boundaries included). A range is [Start, End), inclusive start, exclusive
// end; End 0 stands for 2^64, the top of the hash space, which no uint64
// holds, so the zero Range is the whole space.
//
// A Set is a comparable value (it may key a map, and is part of
// kube.Selection), normalized so that two Sets covering the same hashes
// are equal. The zero Set selects everything and sends nothing to the
// server.
//
// Sources given a Set (kube.SourceOptions.Shard, or Filter around any
// listwatch source) keep only the objects in it. A kube source sends the
// selector as shardSelector on every list and watch; when the server
// applies it (its list says so in metadata.shardInfo), only the shard's
// objects cross the wire. When it does not (the gate is off, or the server
// predates 1.36), the source drops the other objects itself, before they
// are cached: that saves the memory of the objects outside the shard, but
// not the bandwidth or the decoding, since every object is still sent.
// Membership never changes during an object's life (neither its uid nor
// its namespace can change), so no object ever moves in or out of a Set.
//
// Sharding by Namespace puts every object of a namespace in one range, and
// FNV-1a, which KEP-5866 prescribes, keeps similar short names close
// together in the hash space: "ns0" to "ns99" all hash into the first
// third, so "namespace:0/3" holds all of their objects and the other two
// thirds none. Measure the spread on the cluster before choosing it
// (kinformer shards RESOURCE -A --by namespace --split N prints each
// range's count and the skew); UID spreads evenly.
//
// Split, SplitPart and ParseSet's "i/n" take at most MaxSplit ranges, and
// compute a range without building the others: no number in a shard's
// text sizes an allocation.
//
// The sub-package replicas shares a resource between replicas of a
// controller, with Leases.
package shard
