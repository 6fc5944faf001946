package intern

// trick is one way of sharing, a bit of Interner.tricks. Options choose
// them as a group; BenchmarkRetained turns them on one by one to measure
// each (see retained_test.go).
type trick uint8

const (
	// shareFields shares FieldsV1 (meta.go).
	shareFields trick = 1 << iota
	// aliasFieldKeys keys the FieldsV1 table by the bytes it refers to
	// instead of a copy of them (alias.go).
	aliasFieldKeys
	// shareLists shares container resource lists (pod.go).
	shareLists
	// shareSpecRuns shares the decode of a pod's spec runs, and
	// shareStatusRuns of its status conditions (shared.go).
	shareSpecRuns
	shareStatusRuns

	// allTricks is what Options.ShareParts turns on.
	allTricks = shareFields | aliasFieldKeys | shareLists | shareSpecRuns | shareStatusRuns
)

func (in *Interner) has(t trick) bool { return in.tricks&t != 0 }
