package cache

// This file holds how a DeltaFIFO records the resource version with what
// it queues, and answers "which version has the consumer reached".
//
// Entries are numbered (seq) from 1 as they enter the queue. A write that
// brings the source to version V adds the mark (s, V), s being the seq of
// the newest entry then: every delta written up to V is in an entry
// numbered s or lower. Entries leave the queue in seq order (an entry put
// back with ErrRequeue keeps its number and is looked for apart), so the
// mark is reached once every entry numbered s or lower has been processed,
// that is once s is below the lowest seq still queued or in flight. The
// watermark (Reached) is the newest mark reached: its version is the one
// the consumer's state reflects.

// A Mark is a point in the stream of entries a DeltaFIFO has queued, with
// the resource version of the source there.
type Mark struct {
	// Seq numbers the newest entry queued at this point (entries are
	// numbered from 1, in the order they enter the queue; 0: none).
	Seq uint64
	// ResourceVersion is the version of the newest write up to this
	// point: its object's (Add, Update, Delete), its list's (Replace, a
	// relist's Finish) or the bookmark's; "" before the first.
	ResourceVersion string
}

// watermarks is a DeltaFIFO's version bookkeeping, guarded by its mu.
type watermarks struct {
	// seq is the number of the newest entry queued.
	seq uint64
	// written is the version of the newest write.
	written string
	// marks are the marks not reached yet, oldest first; two writes with
	// the same newest entry share one mark, the newer version.
	marks ring[Mark]
	// reached is the watermark.
	reached Mark
	// changed, made by ReachedChanged for waiters, is closed and cleared
	// by the next advance of reached.
	changed chan struct{}
	// requeued counts the queued entries marked requeued.
	requeued int
}

// next numbers a new entry.
func (w *watermarks) next() uint64 {
	w.seq++
	return w.seq
}

// markLocked records that the source is at rv once everything queued so
// far is processed. An empty rv (a source without versions) marks
// nothing.
func (f *DeltaFIFO[T]) markLocked(rv string) {
	if rv == "" {
		return
	}
	w := &f.versions
	w.written = rv
	if n := w.marks.len(); n > 0 && w.marks.at(n-1).Seq == w.seq {
		w.marks.at(n - 1).ResourceVersion = rv
	} else {
		w.marks.push(Mark{Seq: w.seq, ResourceVersion: rv})
	}
	if !f.popping && f.queuedLocked() == 0 {
		f.advanceLocked() // nothing pending: reached at once
	}
}

// lowPendingLocked returns the lowest seq queued or in flight, or the
// next seq when none is.
func (f *DeltaFIFO[T]) lowPendingLocked() uint64 {
	low := f.versions.seq + 1
	switch {
	case f.bulkNext < len(f.bulkKeys):
		low = f.bulkSeq + uint64(f.bulkNext)
	case f.queue.len() > 0:
		low = f.items[*f.queue.at(0)].seq
	}
	if f.popping && f.inflightSeq != 0 {
		low = min(low, f.inflightSeq)
	}
	if f.versions.requeued > 0 {
		for _, e := range f.items {
			if e.requeued {
				low = min(low, e.seq)
			}
		}
	}
	return low
}

// advanceLocked moves the watermark up to the newest mark reached, and
// wakes the waiters of ReachedChanged when it moves.
func (f *DeltaFIFO[T]) advanceLocked() {
	w := &f.versions
	done := f.lowPendingLocked() - 1
	rv := w.reached.ResourceVersion
	for w.marks.len() > 0 && w.marks.at(0).Seq <= done {
		rv = w.marks.pop().ResourceVersion
	}
	if w.marks.len() == 0 {
		w.marks.release()
	}
	if done == w.reached.Seq && rv == w.reached.ResourceVersion {
		return
	}
	w.reached = Mark{Seq: done, ResourceVersion: rv}
	if w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
}

// Bookmark marks the queue with resourceVersion, which the source has
// reached without a change to any object: the consumer reaches it once
// everything queued so far is processed. A closed queue ignores it.
func (f *DeltaFIFO[T]) Bookmark(resourceVersion string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.markLocked(resourceVersion)
	}
}

// Written returns the mark of everything queued so far: the newest
// entry's seq and the newest write's version. Once Reached().Seq is at
// least its Seq, every delta queued before the call has been processed
// (and the consumer reflects its version, if the writes since are
// processed too). Reached equals Written exactly when nothing is queued or
// in flight.
func (f *DeltaFIFO[T]) Written() Mark {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Mark{Seq: f.versions.seq, ResourceVersion: f.versions.written}
}

// Reached returns the watermark: Seq is the highest seq such that every
// entry numbered up to it has been popped and processed (not re-queued),
// and ResourceVersion the version of the newest write among them. What
// the process function applied (an informer's cache) then reflects that
// version: every change up to it, and possibly some later ones of keys
// processed since. It only moves forward.
func (f *DeltaFIFO[T]) Reached() Mark {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.versions.reached
}

// ReachedChanged returns a channel closed the next time Reached moves. To
// wait for a mark, take the channel, then read Reached, then wait on the
// channel if the mark is not there yet. It costs the queue nothing while
// nobody waits.
func (f *DeltaFIFO[T]) ReachedChanged() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.versions.changed == nil {
		f.versions.changed = make(chan struct{})
	}
	return f.versions.changed
}
