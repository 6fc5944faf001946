package source

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/objutil"
	"github.com/kinformer/kinformer/internal/wire"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
)

// This file is the shard filter of a source whose Selection has a Shard
// (see Options.Shard): the selector it sends, how it tells whether
// the server applied it, and the client-side filter it applies either way.

// shardMode says who filters a sharded source's objects. It is reported
// in a log line when it changes and as metrics.ShardMetrics.ServerSide.
type shardMode int32

const (
	// shardModeUnknown: no list has told yet.
	shardModeUnknown shardMode = iota
	// shardServerSide: the server applies the shard selector (its lists
	// carry metadata.shardInfo), so only the shard's objects are sent.
	shardServerSide
	// shardClientSide: the server ignores the selector (feature gate
	// ShardedListAndWatch off, or a server older than 1.36) and sends
	// every object; the source drops those outside the shard before
	// anyone sees them. That saves memory, not bandwidth.
	shardClientSide
)

func (m shardMode) String() string {
	switch m {
	case shardServerSide:
		return "server-side"
	case shardClientSide:
		return "client-side"
	}
	return "unknown"
}

// shardFilter holds a sharded source's shard and what it learnt of the
// server. It is safe for concurrent use.
type shardFilter[T cache.Object] struct {
	set      shard.Set
	selector string // set.Selector(), the shardSelector parameter
	name     string // the source, for the log line
	m        metrics.ShardMetrics
	mode     atomic.Int32 // a shardMode
}

// newShardFilter returns nil for the zero Set: no sharding.
func newShardFilter[T cache.Object](set shard.Set, name string, m metrics.ShardMetrics) *shardFilter[T] {
	if set.IsZero() {
		return nil
	}
	return &shardFilter[T]{set: set, selector: set.Selector(), name: name, m: m.WithDefaults()}
}

// setMode records who filters, reporting each change in the metrics
// (ShardMetrics.ServerSide) and logging it at debug level: a process with
// many sharded sources (the kinformer shards command makes one per hash
// range) would otherwise print a line per source.
func (f *shardFilter[T]) setMode(m shardMode, why string) {
	if m == shardServerSide {
		f.m.ServerSide.Set(1)
	} else {
		f.m.ServerSide.Set(0)
	}
	if shardMode(f.mode.Swap(int32(m))) == m {
		return
	}
	slog.Debug("kinformer shard filter", "source", f.name, "shard", f.set.String(), "mode", m.String(), "why", why)
}

// shardList applies the shard filter to one list page and learns the mode
// from the response. A list the server filtered says so in
// metadata.shardInfo; one holding objects outside the shard was not
// filtered. A list with neither sign is a metadata list (the 1.36
// apiserver leaves shardInfo out of PartialObjectMetadataList) or one
// whose objects all happen to be in the shard: unless the server is known
// to filter, the source then asks it with a one-object list of full
// objects in JSON, whose metadata carries shardInfo. count says whether the
// objects dropped are counted: not for the probe's list, whose object the
// list or stream that fills the cache counts.
func (s *Source[T]) shardList(ctx context.Context, body []byte, page listwatch.Page[T], count bool) listwatch.Page[T] {
	f := s.shard
	info := listShardInfo(body, bytes.HasPrefix(body, wire.Magic))
	listed := len(page.Items)
	page.Items = f.filter(page.Items, count)
	switch {
	case info != nil && info.Selector != "":
		f.setMode(shardServerSide, "the list carries shardInfo "+info.Selector)
	case len(page.Items) < listed:
		f.setMode(shardClientSide, "the list carries objects outside the shard: the server ignored the shard selector")
	case shardMode(f.mode.Load()) == shardServerSide:
		// Nothing contradicts what is known.
	default:
		if info := s.probeShardInfo(ctx); info != nil && info.Selector != "" {
			f.setMode(shardServerSide, "a list of full objects carries shardInfo "+info.Selector)
		} else {
			f.setMode(shardClientSide, "a list of full objects carries no shardInfo: the server ignores the shard selector")
		}
	}
	return page
}

// probeShardInfo lists one full object, in JSON, with the shard selector,
// and returns the list's shardInfo (nil if it has none or the list
// fails).
func (s *Source[T]) probeShardInfo(ctx context.Context) *metav1.ShardInfo {
	body, err := s.request(listwatch.Options{Limit: 1}, false).SetHeader("Accept", acceptJSON).MaxRetries(0).DoRaw(ctx)
	if err != nil {
		return nil
	}
	return listShardInfo(body, false)
}

// filter keeps, in place, the items in the shard, counting the others
// when count is set. Items the server should have filtered turn the mode
// to client-side.
func (f *shardFilter[T]) filter(items []T, count bool) []T {
	kept := items[:0]
	for _, o := range items {
		if f.keep(o, count) {
			kept = append(kept, o)
		}
	}
	clear(items[len(kept):])
	return kept
}

// keep reports whether o is in the shard, and, with count, counts it if
// not.
func (f *shardFilter[T]) keep(o T, count bool) bool {
	m, ok := any(o).(shard.Object)
	if !ok || objutil.IsNil(o) || f.set.Contains(m) { // nil: the reflector's to report
		return true
	}
	if count {
		f.m.Dropped.Inc()
	}
	if shardMode(f.mode.Load()) == shardServerSide {
		f.setMode(shardClientSide, "the server sent an object outside the shard")
	}
	return false
}

// probeShardMode learns the mode with a one-object list when no list has
// told it yet, before a streaming list: the stream itself does not say
// whether the server filtered it. The object is not counted as dropped:
// the stream sends it again.
func (s *Source[T]) probeShardMode(ctx context.Context) {
	if shardMode(s.shard.mode.Load()) != shardModeUnknown {
		return
	}
	_, _ = s.list(ctx, listwatch.Options{Limit: 1}, false) // the answer, or the next list, sets the mode
}

// watch wraps w so that it skips the changes of objects outside the shard.
func (f *shardFilter[T]) watch(w listwatch.Watch[T]) listwatch.Watch[T] {
	return &shardWatch[T]{Watch: w, f: f}
}

type shardWatch[T cache.Object] struct {
	listwatch.Watch[T]
	f *shardFilter[T]
}

func (w *shardWatch[T]) Next() (listwatch.Event[T], error) {
	for {
		ev, err := w.Watch.Next()
		if err != nil {
			return ev, err
		}
		switch ev.Type {
		case listwatch.Added, listwatch.Modified, listwatch.Deleted:
			if !w.f.keep(ev.Object, true) {
				continue
			}
		}
		return ev, nil
	}
}

// listShardInfo reads metadata.shardInfo of a list response, protobuf or
// JSON, without decoding its items; nil when it has none.
func listShardInfo(body []byte, proto bool) *metav1.ShardInfo {
	var lm metav1.ListMeta
	if proto {
		env, err := parseEnvelope(body)
		if err != nil {
			return nil
		}
		f := wire.Fields{B: env.Raw}
		for {
			fld, ok, err := f.Next()
			if err != nil || !ok {
				return nil
			}
			if fld.Num == 1 && fld.Type == wire.Bytes { // every List type's metadata
				if lm.Unmarshal(fld.Bytes) != nil {
					return nil
				}
				return lm.ShardInfo
			}
		}
	}
	// The apiserver writes metadata before items; reading up to it costs
	// little. A body with items first costs a copy of them.
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		if t == "metadata" {
			if dec.Decode(&lm) != nil {
				return nil
			}
			return lm.ShardInfo
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return nil
}
