// Package replicas shares the objects of a resource between the replicas
// of a controller: each replica caches and acts on a part of the hash
// space (package shard), the parts move between replicas as they come and
// go, and a part moves only after its new owner has synced it.
//
// # Informers whose ranges change
//
// An Informer caches a set of ranges of the hash space that changes while
// it runs. Each range has a shared informer of its own, listing and
// watching that range alone (a kube source with Selection.Shard, which the
// server filters when its ShardedListAndWatch gate is on). Acquiring a
// range therefore lists that range only; releasing one stops its watch and
// drops its cache; the ranges that stay are not touched, let alone
// relisted. The cost is one watch per range: with a server that does not
// filter, every range's watch carries every object, so a replica owning k
// ranges decodes every object k times (and still caches only its own).
//
// Handlers (Handler) are told of changes to owned objects (OnAdd,
// OnUpdate, OnDelete) and of ownership changes as such: OnAcquire when an
// object's range is acquired, OnRelease when it is given away. A release is
// never a delete, an acquisition never an add. Owns is the per-object check
// to call before acting, for controllers that cannot tolerate the handoff
// window of a handoff.
//
// Assign is the deterministic split of the hash space between replicas
// that a group of them computes from its member set.
package replicas
