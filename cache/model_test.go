package cache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
)

// This file holds a deliberately simple model of an informer's pipeline —
// a DeltaFIFO whose KnownObjects is the Indexer its consumer applies deltas
// to — and a driver that runs the same random operations against the model
// and the real code, comparing them after every step. The randomized test
// and the fuzz target both use it, each running every operation sequence
// twice: once on a queue free to take its bulk path for a Replace into an
// empty queue, and once on a queue kept on its general path (generalPath);
// both must match the model. The reads that compare the queue with the
// model (ListKeys, GetByKey) come after some steps and not others, so pops
// happen both with and without reads in between: a read must not change
// what a Pop hands out.
//
// The model also defines, on its own terms, the version the queue's
// consumer has reached: every write (an Add, Update or Delete, a Replace,
// a relist's pages, deletion and Finish, a Resync, a Bookmark) gets an id
// in order, and every delta the id of the write that queued it; a write
// is reached once no delta of it or of an earlier write is queued or in
// flight, and the watermark is the version of the newest write reached
// that has one. The queue's Reached must equal it after every step.

type mdelta struct {
	typ     DeltaType
	obj     *obj
	unknown bool
	// wid is the id of the write that queued the delta (the older one's,
	// when two deletions collapse).
	wid int
}

type model struct {
	order    []string // queued keys, in queue order
	q        map[string][]mdelta
	initial  map[string]bool // queued keys that came from the first Replace
	known    map[string]*obj // what the consumer has applied (the indexer)
	inflight string          // key being processed, "" when none
	infl     []mdelta
	written  bool // any write happened
	pending  int  // initial keys not yet processed
	// rvs[id-1] is the version write id brought the source to ("" for
	// none); wid is the id of the write under way.
	rvs []string
	wid int
	// requeued holds the queued keys whose entry was put back by a Pop.
	requeued map[string]bool
}

func newModel() *model {
	return &model{q: map[string][]mdelta{}, initial: map[string]bool{}, known: map[string]*obj{}, requeued: map[string]bool{}}
}

func (m *model) synced() bool { return m.written && m.pending == 0 }

// begin starts write with version rv: the deltas pushed until the next
// begin are its own.
func (m *model) begin(rv string) {
	m.rvs = append(m.rvs, rv)
	m.wid = len(m.rvs)
}

// reached returns the model's watermark: the version of the newest write
// with one all of whose deltas, and those of every earlier write, are
// processed; and whether nothing at all is queued or in flight.
func (m *model) reached() (rv string, drained bool) {
	low := len(m.rvs) + 1
	for _, ds := range m.q {
		for _, d := range ds {
			low = min(low, d.wid)
		}
	}
	for _, d := range m.infl {
		low = min(low, d.wid)
	}
	for id := low - 1; id > 0; id-- {
		if m.rvs[id-1] != "" {
			return m.rvs[id-1], low == len(m.rvs)+1
		}
	}
	return "", low == len(m.rvs)+1
}

// writtenRV returns the version of the newest write with one.
func (m *model) writtenRV() string {
	for id := len(m.rvs); id > 0; id-- {
		if m.rvs[id-1] != "" {
			return m.rvs[id-1]
		}
	}
	return ""
}

func (m *model) push(key string, d mdelta) {
	if d.wid == 0 {
		d.wid = m.wid
	}
	ds, queued := m.q[key]
	if n := len(ds); n > 0 && d.typ == Deleted && ds[n-1].typ == Deleted {
		if ds[n-1].unknown && !d.unknown {
			d.wid = min(d.wid, ds[n-1].wid)
			ds[n-1] = d
		}
	} else {
		ds = append(ds, d)
	}
	m.q[key] = ds
	if !queued {
		m.order = append(m.order, key)
	}
}

// exists says whether key's object will exist once everything queued and
// in flight has been applied.
func (m *model) exists(key string) bool {
	if ds, ok := m.q[key]; ok {
		return ds[len(ds)-1].typ != Deleted
	}
	if m.inflight == key {
		return m.infl[len(m.infl)-1].typ != Deleted
	}
	_, ok := m.known[key]
	return ok
}

// last is the newest state of key the pipeline knows, for a tombstone.
func (m *model) last(key string) *obj {
	if ds, ok := m.q[key]; ok {
		return ds[len(ds)-1].obj
	}
	if m.inflight == key {
		return m.infl[len(m.infl)-1].obj
	}
	return m.known[key]
}

func (m *model) write(t DeltaType, o *obj) {
	m.written = true
	key, _ := MetaNamespaceKey(o)
	if t == Deleted && !m.exists(key) {
		if _, queued := m.q[key]; !queued {
			return
		}
	}
	m.push(key, mdelta{typ: t, obj: o})
}

// replace applies a Replace; the keys it newly queues for inferred
// deletions (and Resync's syncs) may enter the real queue in any order, so
// it returns how many there are at the end of order.
func (m *model) replace(list []*obj) (unordered int) {
	first := !m.written
	m.written = true
	listed := map[string]bool{}
	for _, o := range list {
		key, _ := MetaNamespaceKey(o)
		listed[key] = true
		m.push(key, mdelta{typ: Replaced, obj: o})
	}
	unordered = m.inferDeletions(listed)
	if first {
		for _, key := range m.order {
			m.initial[key] = true
		}
		m.pending = len(m.order)
	}
	return unordered
}

// inferDeletions queues a tombstone for every key that will exist and is
// not listed, as the end of a Replace or of a relist session does, and
// returns how many keys it newly queued (in any order).
func (m *model) inferDeletions(listed map[string]bool) (unordered int) {
	for _, key := range slices.Clone(m.order) {
		if !listed[key] {
			m.push(key, mdelta{typ: Deleted, obj: m.last(key), unknown: true})
		}
	}
	before := len(m.order)
	candidates := slices.Collect(maps.Keys(m.known))
	if m.inflight != "" {
		candidates = append(candidates, m.inflight)
	}
	for _, key := range candidates {
		if _, queued := m.q[key]; !queued && !listed[key] && m.exists(key) {
			m.push(key, mdelta{typ: Deleted, obj: m.last(key), unknown: true})
		}
	}
	return len(m.order) - before
}

func (m *model) resync() (unordered int) {
	before := len(m.order)
	for key, o := range m.known {
		if _, queued := m.q[key]; !queued && key != m.inflight {
			m.push(key, mdelta{typ: Sync, obj: o})
		}
	}
	return len(m.order) - before
}

// pipeline is the real code under test next to its model.
type pipeline struct {
	rng     *rand.Rand
	m       *model
	idx     *Indexer[*obj]
	f       *DeltaFIFO[*obj]
	nextRV  int
	nesting bool // inside a process function
	// session is the relist session open on the queue, and listed the
	// keys it has applied; nil when none is open.
	session RelistSession[*obj]
	listed  map[string]bool
}

// newPipeline returns a pipeline whose queue's KnownObjects is its
// indexer; with general, wrapped in generalPath.
func newPipeline(rng *rand.Rand, general bool) *pipeline {
	idx := NewIndexer(IndexerOptions[*obj]{Indexers: Indexers[*obj]{"tag": tagIndex, NamespaceIndex: MetaNamespaceIndexFunc[*obj]}})
	var known KnownObjects[*obj] = idx
	if general {
		known = generalPath{idx}
	}
	return &pipeline{rng: rng, m: newModel(), idx: idx, f: NewDeltaFIFO(DeltaFIFOOptions[*obj]{KnownObjects: known})}
}

// generalPath is KnownObjects over an indexer, plus a key it lists but
// cannot find: the queue never knows nothing, so it never takes its bulk
// path, and that key gets no inferred deletion.
type generalPath struct{ *Indexer[*obj] }

func (g generalPath) ListKeys() []string { return append(g.Indexer.ListKeys(), "ghost/x") }
func (g generalPath) Len() int           { return g.Indexer.Len() + 1 }

// runTwice runs drive on two pipelines with the same random source: one
// that may take the bulk path, one kept on the general path.
func runTwice(newRNG func() *rand.Rand, drive func(p *pipeline) error) error {
	for _, general := range []bool{false, true} {
		if err := drive(newPipeline(newRNG(), general)); err != nil {
			return fmt.Errorf("general path only %v: %w", general, err)
		}
	}
	return nil
}

var (
	modelNamespaces = []string{"", "a", "b"}
	modelTags       = []string{"x", "y", "z"}
)

func (p *pipeline) randObj() *obj {
	p.nextRV++
	var tags []string
	for _, t := range modelTags {
		if p.rng.IntN(3) == 0 {
			tags = append(tags, t)
		}
	}
	return newObj(modelNamespaces[p.rng.IntN(len(modelNamespaces))], fmt.Sprint(p.rng.IntN(6)), fmt.Sprint(p.nextRV), tags...)
}

// step runs one random operation on both sides and checks them.
func (p *pipeline) step() error {
	unordered := 0
	var err error
	if p.session != nil {
		return p.sessionStep()
	}
	switch op := p.rng.IntN(100); {
	case op < 5:
		return p.beginRelist()
	case op < 20:
		o := p.randObj()
		p.m.begin(o.rv)
		p.m.write(Added, o)
		err = p.f.Add(o)
	case op < 40:
		o := p.randObj()
		p.m.begin(o.rv)
		p.m.write(Updated, o)
		err = p.f.Update(o)
	case op < 53:
		o := p.randObj()
		p.m.begin(o.rv)
		p.m.write(Deleted, o)
		err = p.f.Delete(o)
	case op < 55:
		p.nextRV++
		rv := fmt.Sprint(p.nextRV)
		p.m.begin(rv)
		p.f.Bookmark(rv)
	case op < 60:
		return p.relist()
	case op < 63:
		p.m.begin("")
		unordered = p.m.resync()
		err = p.f.Resync()
	case op < 65:
		err = p.badInput()
	default:
		if p.nesting {
			return nil // a process function must not Pop
		}
		err = p.pop()
	}
	if err != nil {
		return err
	}
	return p.check(unordered)
}

// relist replaces the queue's content with a random list (randList).
func (p *pipeline) relist() error {
	list, good := p.randList()
	p.nextRV++
	rv := fmt.Sprint(p.nextRV)
	p.m.begin(rv)
	unordered := p.m.replace(good)
	err := p.f.Replace(list, rv)
	if err := skippedOne(list, good, err, "Replace"); err != nil {
		return err
	}
	return p.check(unordered)
}

// skippedOne checks the error of a write of list whose good items are
// good: none, or the one bad item skipped.
func skippedOne(list, good []*obj, err error, op string) error {
	var se *SkippedError
	switch {
	case len(list) == len(good) && err != nil:
		return err
	case len(list) != len(good) && (!errors.As(err, &se) || len(se.Errs) != 1 || !errors.Is(err, ErrInvalidObject)):
		return fmt.Errorf("%s with one bad item: %v", op, err)
	}
	return nil
}

// beginRelist opens a relist session, which the queue grants once it has
// been written to.
func (p *pipeline) beginRelist() error {
	s, ok := p.f.BeginRelist()
	if ok != p.m.written {
		return fmt.Errorf("BeginRelist = %v after a write %v", ok, p.m.written)
	}
	if ok {
		if _, again := p.f.BeginRelist(); again {
			return fmt.Errorf("second BeginRelist granted while one is open")
		}
		p.session, p.listed = s, map[string]bool{}
	}
	return p.check(0)
}

// sessionStep runs one step while a relist session is open: a page of
// the list, a deletion seen while listing, its end (Finish or Abort), or
// what goes on alongside (pops, resyncs).
func (p *pipeline) sessionStep() error {
	unordered := 0
	var err error
	switch op := p.rng.IntN(100); {
	case op < 35:
		list, good := p.randList()
		p.m.begin("") // a page marks nothing: the list is not whole
		for _, o := range good {
			key, _ := MetaNamespaceKey(o)
			p.listed[key] = true
			p.m.push(key, mdelta{typ: Replaced, obj: o})
		}
		if err := skippedOne(list, good, p.session.Apply(list), "Apply"); err != nil {
			return err
		}
	case op < 42:
		o := p.randObj()
		key, _ := MetaNamespaceKey(o)
		delete(p.listed, key)
		p.m.begin("")
		p.m.write(Deleted, o)
		err = p.session.Delete(o)
	case op < 52:
		p.nextRV++
		rv := fmt.Sprint(p.nextRV)
		p.m.begin(rv)
		unordered = p.m.inferDeletions(p.listed)
		err = p.session.Finish(rv)
		p.endSession()
	case op < 55:
		p.session.Abort()
		p.endSession()
	case op < 58:
		p.m.begin("")
		unordered = p.m.resync()
		err = p.f.Resync()
	default:
		if p.nesting {
			return nil
		}
		err = p.pop()
	}
	if err != nil {
		return err
	}
	return p.check(unordered)
}

// endSession forgets the session, which must now refuse to be used.
func (p *pipeline) endSession() {
	s := p.session
	p.session, p.listed = nil, nil
	if err := s.Apply([]*obj{p.randObj()}); !errors.Is(err, ErrRelistEnded) {
		panic(fmt.Sprintf("Apply after the end: %v", err))
	}
}

// randList is a random list, which may name a key twice, be sorted by
// key, and hold items the queue must skip (nil, or a name no key can be
// made of); good is the list without them.
func (p *pipeline) randList() (list, good []*obj) {
	list = make([]*obj, p.rng.IntN(8))
	for i := range list {
		list[i] = p.randObj()
	}
	if p.rng.IntN(3) == 0 {
		slices.SortFunc(list, func(a, b *obj) int {
			ka, _ := MetaNamespaceKey(a)
			kb, _ := MetaNamespaceKey(b)
			return strings.Compare(ka, kb)
		})
	}
	good = list
	if p.rng.IntN(4) == 0 {
		good = slices.Clone(list)
		bad := []*obj{nil, newObj("a", "x/y", "1"), newObj("b", "", "1")}[p.rng.IntN(3)]
		i := p.rng.IntN(len(list) + 1)
		list = slices.Insert(slices.Clone(list), i, bad)
	}
	return list, good
}

// badInput writes something invalid to the FIFO and the indexer; each must
// fail and change nothing.
func (p *pipeline) badInput() error {
	var nilObj *obj
	if err := p.f.Add(nilObj); !errors.Is(err, ErrInvalidObject) {
		return fmt.Errorf("fifo.Add(nil) = %v", err)
	}
	bad := p.randObj()
	bad.tags = append(bad.tags, "bad")
	if err := p.idx.Update(bad); !errors.Is(err, ErrIndexFunc) {
		return fmt.Errorf("indexer.Update(bad tag) = %v", err)
	}
	if err := p.idx.Replace([]*obj{p.randObj(), bad}); !errors.Is(err, ErrIndexFunc) {
		return fmt.Errorf("indexer.Replace(bad tag) = %v", err)
	}
	return nil
}

func (p *pipeline) pop() error {
	if len(p.m.order) == 0 {
		return nil
	}
	key := p.m.order[0]
	want, wantInitial := p.m.q[key], p.m.initial[key]
	outcome := p.rng.IntN(10) // 0: requeue, 1: fail, else apply
	nested := p.rng.IntN(3) == 0 && outcome != 1
	_, err := p.f.Pop(context.Background(), func(gotKey string, ds Deltas[*obj], isInitial bool) error {
		if gotKey != key {
			return fmt.Errorf("popped key %s, want %s", gotKey, key)
		}
		if err := sameDeltas(key, ds, want); err != nil {
			return err
		}
		if isInitial != wantInitial {
			return fmt.Errorf("%s: isInInitialList = %v, want %v", key, isInitial, wantInitial)
		}
		p.m.order, p.m.inflight, p.m.infl = p.m.order[1:], key, want
		delete(p.m.q, key)
		delete(p.m.initial, key)
		if nested {
			p.nesting = true
			for range 1 + p.rng.IntN(3) {
				if err := p.step(); err != nil {
					return err
				}
			}
			p.nesting = false
		}
		switch outcome {
		case 0:
			return fmt.Errorf("try again: %w", ErrRequeue)
		case 1:
			return errFailed
		}
		return p.apply(key, ds)
	})
	p.m.inflight, p.m.infl = "", nil
	delete(p.m.requeued, key) // in flight, a put back entry still left its gap
	switch {
	case outcome == 0 && errors.Is(err, ErrRequeue):
		// The popped deltas go back ahead of newer ones; a key no longer
		// queued goes to the back.
		newer, queued := p.m.q[key]
		delete(p.m.q, key)
		if queued {
			i := slices.Index(p.m.order, key)
			p.m.order = slices.Delete(p.m.order, i, i+1)
			p.m.push(key, want[0])
			p.m.order = slices.Insert(p.m.order[:len(p.m.order)-1], i, key)
		} else {
			p.m.push(key, want[0])
		}
		for _, d := range append(slices.Clone(want[1:]), newer...) {
			p.m.push(key, d)
		}
		if wantInitial {
			p.m.initial[key] = true
		}
		p.m.requeued[key] = true
		return nil
	case outcome == 1 && errors.Is(err, errFailed):
	case outcome > 1 && err == nil:
	default:
		return fmt.Errorf("pop %s: %w", key, err)
	}
	if wantInitial {
		p.m.pending--
	}
	return nil
}

var errFailed = errors.New("failed")

// apply does what an informer does with popped deltas, checking that no
// deletion reaches an object that is already gone.
func (p *pipeline) apply(key string, ds Deltas[*obj]) error {
	for _, d := range ds {
		if d.Type == Deleted {
			if _, ok := p.m.known[key]; !ok {
				return fmt.Errorf("%s: duplicate delete: %s", key, describe(ds))
			}
			delete(p.m.known, key)
			if err := p.idx.Delete(d.Object); err != nil {
				return err
			}
			continue
		}
		p.m.known[key] = d.Object
		if err := p.idx.Update(d.Object); err != nil {
			return err
		}
	}
	return nil
}

func sameDeltas(key string, got Deltas[*obj], want []mdelta) error {
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Type == want[i].typ && got[i].Object == want[i].obj && got[i].StateUnknown == want[i].unknown
	}
	if !ok {
		return fmt.Errorf("%s: deltas %s, want %s", key, describe(got), describeModel(want))
	}
	return nil
}

func describeModel(ds []mdelta) string {
	d := make(Deltas[*obj], len(ds))
	for i, x := range ds {
		d[i] = Delta[*obj]{Type: x.typ, Object: x.obj, StateUnknown: x.unknown}
	}
	return describe(d)
}

// check compares the real queue and indexer with the model. The last
// unordered keys of the model's order may appear in any order. It reads
// the queue's keys and deltas only after some steps (always when the
// model does not know the order), so that pops run both with and without
// reads between them.
func (p *pipeline) check(unordered int) error {
	if p.f.Len() != len(p.m.order) {
		return fmt.Errorf("Len = %d, want %d", p.f.Len(), len(p.m.order))
	}
	if p.f.HasSynced() != p.m.synced() {
		return fmt.Errorf("HasSynced = %v, want %v", p.f.HasSynced(), p.m.synced())
	}
	// Every entry queued is queued, in flight or processed: the entries
	// between the watermark and the newest are those pending, exactly
	// while no pending entry was put back (one keeps its older number,
	// leaving a gap until it is processed). The watermark's version is
	// the model's.
	pending := uint64(len(p.m.order))
	if p.m.inflight != "" {
		pending++
	}
	w, r := p.f.Written(), p.f.Reached()
	if d := w.Seq - r.Seq; d != pending && (len(p.m.requeued) == 0 || d < pending) {
		return fmt.Errorf("Written %d - Reached %d = %d, want %d entries queued or in flight (%d put back)", w.Seq, r.Seq, d, pending, len(p.m.requeued))
	}
	rv, drained := p.m.reached()
	if r.ResourceVersion != rv || w.ResourceVersion != p.m.writtenRV() || (r == w) != drained {
		return fmt.Errorf("Reached %+v, Written %+v; want reached at %q, written at %q, drained %v", r, w, rv, p.m.writtenRV(), drained)
	}
	if unordered == 0 && p.rng.IntN(3) == 0 {
		return checkIndexer(p.idx, p.m.known)
	}
	got := p.f.ListKeys()
	if len(got) != len(p.m.order) || p.f.Len() != len(got) {
		return fmt.Errorf("queue %v, want %v", got, p.m.order)
	}
	fixed := len(got) - unordered
	if !slices.Equal(got[:fixed], p.m.order[:fixed]) || !slices.Equal(sorted(got[fixed:]), sorted(p.m.order[fixed:])) {
		return fmt.Errorf("queue %v, want %v (last %d in any order)", got, p.m.order, unordered)
	}
	p.m.order = got
	for _, key := range got {
		ds, ok, err := p.f.GetByKey(key)
		if err != nil || !ok {
			return fmt.Errorf("GetByKey(%s) = %v, %v", key, ok, err)
		}
		if err := sameDeltas(key, ds, p.m.q[key]); err != nil {
			return err
		}
	}
	probe, _ := MetaNamespaceKey(p.randObj())
	if _, ok, err := p.f.GetByKey(probe); ok != slices.Contains(got, probe) || err != nil {
		return fmt.Errorf("GetByKey(%s) = %v, %v; queued: %v", probe, ok, err, got)
	}
	return checkIndexer(p.idx, p.m.known)
}

// checkIndexer compares an indexer holding *obj under the "tag" and
// namespace indexes with the content it should have.
func checkIndexer(idx *Indexer[*obj], want map[string]*obj) error {
	keys := sorted(slices.Collect(maps.Keys(want)))
	if got := sorted(idx.ListKeys()); !slices.Equal(got, keys) {
		return fmt.Errorf("indexer keys %v, want %v", got, keys)
	}
	if got := idx.List(); len(got) != len(want) {
		return fmt.Errorf("indexer List has %d objects, want %d", len(got), len(want))
	}
	for key, o := range want {
		if got, ok, _ := idx.GetByKey(key); !ok || got != o {
			return fmt.Errorf("indexer[%s] = %v, want %v", key, got, o)
		}
	}
	registered := idx.GetIndexers()
	for _, ix := range []struct {
		name string
		vals func(*obj) []string
	}{
		{"tag", func(o *obj) []string { return o.tags }},
		{NamespaceIndex, func(o *obj) []string { return []string{o.ns} }},
	} {
		if registered[ix.name] == nil {
			continue
		}
		wantIdx := map[string][]string{}
		for key, o := range want {
			for _, v := range ix.vals(o) {
				if !slices.Contains(wantIdx[v], key) {
					wantIdx[v] = append(wantIdx[v], key)
				}
			}
		}
		values := sorted(slices.Collect(maps.Keys(wantIdx)))
		if got := sorted(idx.ListIndexFuncValues(ix.name)); !slices.Equal(got, values) {
			return fmt.Errorf("index %s values %v, want %v", ix.name, got, values)
		}
		for v, ks := range wantIdx {
			got, err := idx.IndexKeys(ix.name, v)
			if err != nil || !slices.Equal(sorted(got), sorted(ks)) {
				return fmt.Errorf("index %s[%s] = %v (%v), want %v", ix.name, v, sorted(got), err, sorted(ks))
			}
		}
	}
	return nil
}
