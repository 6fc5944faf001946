package intern

// trick is one way of sharing, a bit of Interner.tricks. Options choose
// them as a group; BenchmarkRetained turns them on one by one to measure
// each (see retained_test.go). The figures below are its B/pod gains on
// 10,000 pods with the other tricks on (median of 5 runs).
type trick uint8

const (
	// shareFields shares FieldsV1 (meta.go): 1,759 B/pod.
	shareFields trick = 1 << iota
	// aliasFieldKeys keys the FieldsV1 table by the bytes it refers to
	// instead of a copy of them (alias.go): 290 B/pod (bounded: at most
	// the table's 4 MiB over all pods).
	aliasFieldKeys
	// shareLists shares container resource lists (lists.go): 96 B/pod
	// on top of spec runs (equal lists of distinct containers), 1,424
	// B/pod without them. Beyond pods it serves workload objects' pod
	// templates, and pods whose bytes could not be cut.
	shareLists
	// shareSpecRuns shares the decode of a pod's spec runs (shared.go):
	// 1,938 B/pod, and about 40% less decode CPU; shareStatusRuns of its
	// status conditions: 479 B/pod.
	shareSpecRuns
	shareStatusRuns

	// allTricks is what Options.ShareParts turns on.
	allTricks = shareFields | aliasFieldKeys | shareLists | shareSpecRuns | shareStatusRuns
)

func (in *Interner) has(t trick) bool { return in.tricks&t != 0 }
