package cache

import (
	"errors"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// obj is the small object type the tests store. Tags feed the "tag" index.
type obj struct {
	ns, name, rv string
	tags         []string
}

func (o *obj) GetNamespace() string       { return o.ns }
func (o *obj) GetName() string            { return o.name }
func (o *obj) GetResourceVersion() string { return o.rv }

func newObj(ns, name, rv string, tags ...string) *obj {
	return &obj{ns: ns, name: name, rv: rv, tags: tags}
}

var errBadTag = errors.New("bad tag")

// tagIndex indexes an object under each of its tags, and fails on the tag
// "bad".
func tagIndex(o *obj) ([]string, error) {
	if slices.Contains(o.tags, "bad") {
		return nil, errBadTag
	}
	return o.tags, nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// names returns "ns/name@rv" for each object, sorted.
func names(objs []*obj) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.ns+"/"+o.name+"@"+o.rv)
	}
	slices.Sort(out)
	return out
}
