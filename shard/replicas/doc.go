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
// to call before acting, for controllers that cannot tolerate the window
// of a handoff, when two replicas own a range.
//
// # Groups of replicas
//
// A Group makes replicas agree on who owns what, with Kubernetes itself as
// the coordination engine and no consensus of its own:
//
//   - Membership. Each replica holds a coordination.k8s.io/v1 Lease named
//     after the group and itself (label GroupLabel), renewed every
//     RenewPeriod, and reads the group's Leases every PollPeriod to know
//     the members. A member whose Lease has not been renewed for half a
//     LeaseDuration (as this replica observes it, on its own clock) is left
//     out of the split; its claims stand until a full LeaseDuration has
//     passed.
//   - Assignment. The hash space is cut into Slots equal ranges, split
//     between the members by Assign, a pure function of the member set:
//     every replica computes the same split, and a join or a leave moves
//     close to the fewest ranges possible.
//   - Start. A replica writes its Lease, claiming nothing, before it takes
//     any range. If a member of the group already claims ranges, it then
//     takes its share at once; if none does (the group is starting), it
//     waits until GroupOptions.SettlePeriod has passed since its start, so
//     that replicas starting together split from the start instead of the
//     first one acquiring, and listing, every range for a moment.
//   - Handoff. A replica acquires the ranges assigned to it; once a range
//     is owned (synced, and every handler has returned from its OnAcquire
//     calls) it claims it in its Lease (annotation
//     shard.kinformer.io/ranges). A replica releases a range no longer
//     assigned to it only once the Lease of the range's new owner claims
//     it. Every object thus has at least one owner at all times, and two
//     only during the handoff window: from the gainer's sync (its Owns is
//     true from the range's first OnAcquire) until the loser has seen the
//     gainer's claim (its next poll of the Leases, at most PollPeriod
//     after the claim) and started releasing the range, when its Owns
//     turns false.
//   - Failure. A replica that dies without a goodbye stops renewing its
//     Lease. Half a LeaseDuration later the others leave it out of the
//     split and acquire its ranges; its claims lapse a full LeaseDuration
//     after its last renewal. If one sync of its ranges takes less than
//     half a LeaseDuration, its ranges are claimed again before its claims
//     lapse, so even a crash leaves no object without an owner. A replica
//     that cannot renew its own Lease for a LeaseDuration considers its
//     claims lapsed: Owns answers false until it renews again.
//   - Leaving. A replica whose Run ends marks its Lease as leaving, waits
//     (up to a LeaseDuration) until the others have claimed its ranges,
//     releases them and deletes its Lease.
//
// Metrics (metrics.ReplicaMetrics, through GroupOptions.Metrics): members,
// ranges and objects owned, ranges acquired and released, time to converge
// after a change of the member set.
package replicas
