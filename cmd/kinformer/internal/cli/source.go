package cli

// Each output is served by the cheapest source that has what it prints:
//
//	-o name               metadata only (kube.Source[*metav1.PartialObjectMetadata], protobuf): names, nothing else
//	table, -o wide        the server's Table rendering (tableSource): the cells
//	                      kubectl shows, computed by the server
//	-o json, -o yaml      whole objects (kube.Source[*unstructured.Unstructured])
//
// --sort-by may need more: a path outside metadata needs whole objects for
// -o name, and the Table rows' objects (includeObject=Object) for a table.
//
// Without --sort-by, names or --shard, get -o name, -o json and -o yaml
// need no cache at all: they print each item of a plain list as it is read
// (streamDocument, document.go), in the server's order, as kubectl does.

// outputSource names a kind of source.
type outputSource int

const (
	fromMetadata outputSource = iota
	fromTable
	fromObjects
)

func (s outputSource) String() string {
	switch s {
	case fromMetadata:
		return "metadata"
	case fromTable:
		return "table"
	}
	return "objects"
}

// sourceFor is the source that serves output sorted by sortPath (nil: not
// sorted).
func sourceFor(output string, sortPath []string) outputSource {
	switch output {
	case outputName:
		if inMetadata(sortPath) {
			return fromMetadata
		}
		return fromObjects
	case outputTable, outputWide:
		return fromTable
	}
	return fromObjects
}

// tableInclude is what the rows of a Table source carry besides cells, and
// whether they keep it for sorting:
//   - nothing (includeObject=None) for get in one namespace, or of a
//     cluster-scoped resource, unsorted: the name cell and the namespace
//     asked for key each row;
//   - metadata with --shard (the filter hashes each row's uid or
//     namespace), for rows from every namespace (their namespace is printed),
//     for sorting by a metadata field, and for watch, whose cache needs each
//     row's resource version (a relist compares versions to find what
//     changed, and a plain list gives none without metadata);
//   - the whole object to sort by a field outside metadata.
func tableInclude(targets []target, sortPath []string, watch bool, sharded bool) (includeObject, bool) {
	switch {
	case len(sortPath) > 0 && !inMetadata(sortPath):
		return includeWhole, true
	case len(sortPath) > 0:
		return includeMetadata, true
	case watch, sharded:
		return includeMetadata, false
	}
	for _, t := range targets {
		if t.res.Namespaced && t.namespace == "" {
			return includeMetadata, false
		}
	}
	return includeNone, false
}
