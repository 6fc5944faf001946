package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"time"
)

// statSample is what the stats view shows of one informer at one moment.
type statSample struct {
	// name is the informer's name for people; resource (plural, dotted
	// with the group) and namespace ("" for all) are for scripts.
	name, resource, namespace string
	objects                   int
	synced                    bool
	syncTime                  time.Duration
	// listed and total are the initial sync's progress while not synced
	// (total 0: unknown), listRate its objects per second, with an ETA
	// when etaKnown.
	listed, total int64
	listRate      float64
	eta           time.Duration
	etaKnown      bool
	// fallbacks counts streaming lists given up for paged ones (failed or
	// stalled), restarts watches restarted because they had stalled;
	// stalls the streams given up for going silent (the STALLS column):
	// streaming lists whose end bookmark never came, and restarts.
	fallbacks, restarts int
	stalls              int64
	// Events received on watches since the start, and per second over the
	// last interval.
	added, modified, deleted          int64
	addRate, modifyRate, deleteRate   float64
	backlog                           int64
	merged, lists, watches, errEvents int64
	rv                                string
	// shard is how the informer's shard is filtered (--shard): "server",
	// "client" or "probing"; "" when it reads every object. dropped
	// counts the objects a client-side filter dropped.
	shard   string
	dropped int64
	// ckpt is what the informer's checkpoint did (--checkpoint-dir); nil
	// without one.
	ckpt *ckptSample
}

// ckptSample is what an informer's checkpoint did: the file it started
// from, or why one was refused, and what was written since.
type ckptSample struct {
	loaded  bool
	objects int64
	age     time.Duration
	refused string // the reason of the last refusal, "" if none
	writes  int64
	errors  int64
	bytes   int64
}

// String is the CHECKPOINT cell and the kv value, without spaces:
// "loaded:120,age:3m0s", "refused:other-cluster" or "cold", then
// ",written:2,14.2KiB" once written.
func (c *ckptSample) String() string {
	var s string
	switch {
	case c.refused != "":
		s = "refused:" + c.refused
	case c.loaded:
		s = fmt.Sprintf("loaded:%d,age:%s", c.objects, roundDuration(c.age))
	default:
		s = "cold"
	}
	if c.writes > 0 {
		s += fmt.Sprintf(",written:%d,%s", c.writes, bytesIEC(uint64(c.bytes)))
	}
	if c.errors > 0 {
		s += fmt.Sprintf(",write-errors:%d", c.errors)
	}
	return s
}

// processSample is the process-wide part of a sample.
type processSample struct {
	heapBytes  uint64
	goroutines int
	uptime     time.Duration
}

// statsFrame is one refresh of the view.
type statsFrame struct {
	at        time.Time
	informers []statSample
	process   processSample
	// final: the command has stopped (the frame left on the screen after
	// exit), so the footer does not say how to stop it.
	final bool
}

// statsSampler reads a group's informers, keeping the previous counts to
// compute rates. It is used by one goroutine.
type statsSampler[T labeled] struct {
	g     *group[T]
	start time.Time
	last  time.Time
	prev  []statSample
	mem   []metrics.Sample
}

func newStatsSampler[T labeled](g *group[T]) *statsSampler[T] {
	now := time.Now()
	return &statsSampler[T]{
		g: g, start: now, last: now,
		prev: make([]statSample, len(g.informers)),
		mem:  []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}},
	}
}

func (s *statsSampler[T]) sample(now time.Time) statsFrame {
	elapsed := now.Sub(s.last).Seconds()
	s.last = now
	out := make([]statSample, len(s.g.informers))
	for i, l := range s.g.informers {
		c := l.counters
		pr := l.progress()
		st := statSample{
			name:      l.name,
			resource:  resourceName(l.target),
			namespace: l.target.namespace,
			objects:   l.inf.Cache().Len(),
			synced:    l.synced(),
			syncTime:  l.syncTime(),
			listed:    pr.Objects,
			total:     max(pr.Expected, 0),
			fallbacks: pr.Fallbacks,
			restarts:  pr.StalledWatches,
			stalls:    c.stalls.value(),
			added:     c.added.value(),
			modified:  c.modified.value(),
			deleted:   c.deleted.value(),
			backlog:   int64(c.backlog.value()),
			merged:    c.merged.value(),
			lists:     c.lists.value(),
			watches:   c.watches.value(),
			errEvents: c.errorEvents.value() + c.listErrors.value() + c.watchErrors.value(),
			rv:        l.inf.LastSyncResourceVersion(),
		}
		if sc := c.shard; sc != nil {
			st.shard, st.dropped = sc.mode(), sc.dropped.value()
		}
		if cc := &c.ckpt; cc.on.Load() {
			st.ckpt = &ckptSample{loaded: cc.loaded.value() > 0, objects: int64(cc.objects.value()),
				age: time.Duration(cc.age.value() * float64(time.Second)), writes: cc.writes.value(),
				errors: cc.errors.value(), bytes: int64(cc.bytes.value())}
			if r := cc.reason.Load(); r != nil {
				st.ckpt.refused = *r
			}
		}
		st.eta, st.etaKnown = pr.ETA(now)
		st.listRate = pr.Rate(now)
		// Rates start once the informer was synced at the previous sample,
		// so the initial list (streamed as ADDED events) does not count.
		if p := s.prev[i]; elapsed > 0 && p.synced {
			st.addRate = float64(st.added-p.added) / elapsed
			st.modifyRate = float64(st.modified-p.modified) / elapsed
			st.deleteRate = float64(st.deleted-p.deleted) / elapsed
		}
		out[i] = st
	}
	s.prev = out
	metrics.Read(s.mem)
	ps := processSample{goroutines: runtime.NumGoroutine(), uptime: now.Sub(s.start)}
	if v := s.mem[0].Value; v.Kind() == metrics.KindUint64 {
		ps.heapBytes = v.Uint64()
	}
	return statsFrame{at: now, informers: out, process: ps}
}

// Output formats of `kinformer stats` (-o).
const (
	statsTableOut = ""     // a table fitted to the terminal, redrawn in place
	statsWideOut  = "wide" // every column
	statsJSONOut  = "json" // one JSON object per informer per refresh
	statsKVOut    = "kv"   // one line of key=value pairs per informer per refresh
)

func validStatsOutput(o string) error {
	switch o {
	case statsTableOut, statsWideOut, statsJSONOut, statsKVOut:
		return nil
	}
	return fmt.Errorf("unknown output format %q for stats: use one of wide, json, kv (or nothing for a table)", o)
}

// formatStatsLine is the plain, parseable form of a sample: space-separated
// key=value pairs, the same keys on every line, the resource first.
//
//	resource=pods namespace=* objects=150 synced=true sync=84ms added/s=2.0 modified/s=4.0 deleted/s=2.0 added=120 modified=240 deleted=118 backlog=0 merged=0 rv=4711 lists=1 watches=1 errors=0 fallbacks=0 restarts=0 stalls=0 shard=- dropped=0 checkpoint=- heap=14.2MiB
//
// shard is the --shard filter's mode: server, client, probing, or "-"
// without --shard; dropped counts what a client-side filter dropped.
// checkpoint is what the --checkpoint-dir checkpoint did (ckptSample's
// String), "-" without one.
func formatStatsLine(s statSample, p processSample) string {
	sync := "-"
	if s.synced {
		sync = s.syncTime.Round(time.Millisecond).String()
	}
	rv := s.rv
	if rv == "" {
		rv = "-"
	}
	ns := s.namespace
	if ns == "" {
		ns = "*"
	}
	mode := s.shard
	if mode == "" {
		mode = "-"
	}
	ckpt := "-"
	if s.ckpt != nil {
		ckpt = s.ckpt.String()
	}
	return fmt.Sprintf("resource=%s namespace=%s objects=%d synced=%t sync=%s added/s=%.1f modified/s=%.1f deleted/s=%.1f added=%d modified=%d deleted=%d backlog=%d merged=%d rv=%s lists=%d watches=%d errors=%d fallbacks=%d restarts=%d stalls=%d shard=%s dropped=%d checkpoint=%s heap=%s",
		s.resource, ns, s.objects, s.synced, sync, s.addRate, s.modifyRate, s.deleteRate,
		s.added, s.modified, s.deleted, s.backlog, s.merged, rv, s.lists, s.watches, s.errEvents,
		s.fallbacks, s.restarts, s.stalls, mode, s.dropped, ckpt, bytesIEC(p.heapBytes))
}

// statsJSON is the -o json form of a sample, one object per line.
type statsJSON struct {
	Time        string  `json:"time"`
	Resource    string  `json:"resource"`
	Namespace   string  `json:"namespace,omitempty"`
	Objects     int     `json:"objects"`
	Synced      bool    `json:"synced"`
	SyncSeconds float64 `json:"syncSeconds,omitempty"`
	// Listed and Total are the initial list's progress, before the sync.
	Listed          int64   `json:"listed,omitempty"`
	Total           int64   `json:"total,omitempty"`
	ListedPerSec    float64 `json:"listedPerSecond,omitempty"`
	ETASeconds      float64 `json:"etaSeconds,omitempty"`
	Fallbacks       int     `json:"fallbacks"`
	Restarts        int     `json:"restarts"`
	Stalls          int64   `json:"stalls"`
	AddedPerSec     float64 `json:"addedPerSecond"`
	ModifiedPerSec  float64 `json:"modifiedPerSecond"`
	DeletedPerSec   float64 `json:"deletedPerSecond"`
	Added           int64   `json:"added"`
	Modified        int64   `json:"modified"`
	Deleted         int64   `json:"deleted"`
	Backlog         int64   `json:"backlog"`
	Merged          int64   `json:"merged"`
	ResourceVersion string  `json:"resourceVersion,omitempty"`
	Lists           int64   `json:"lists"`
	Watches         int64   `json:"watches"`
	Errors          int64   `json:"errors"`
	// Shard is the --shard filter's mode (server, client, probing), and
	// Dropped what a client-side filter dropped; absent without --shard.
	Shard   string `json:"shard,omitempty"`
	Dropped int64  `json:"dropped,omitempty"`
	// Checkpoint is what the --checkpoint-dir checkpoint did; absent
	// without one.
	Checkpoint *checkpointJSON `json:"checkpoint,omitempty"`
	HeapBytes  uint64          `json:"heapBytes"`
}

// checkpointJSON is the -o json form of a ckptSample.
type checkpointJSON struct {
	Loaded        bool    `json:"loaded"`
	LoadedObjects int64   `json:"loadedObjects,omitempty"`
	AgeSeconds    float64 `json:"ageSeconds,omitempty"`
	Refused       string  `json:"refused,omitempty"`
	Writes        int64   `json:"writes"`
	WriteErrors   int64   `json:"writeErrors,omitempty"`
	Bytes         int64   `json:"bytes,omitempty"`
}

func formatStatsJSON(at time.Time, s statSample, p processSample) string {
	j := statsJSON{
		Time: at.UTC().Format(time.RFC3339), Resource: s.resource, Namespace: s.namespace,
		Objects: s.objects, Synced: s.synced,
		AddedPerSec: s.addRate, ModifiedPerSec: s.modifyRate, DeletedPerSec: s.deleteRate,
		Added: s.added, Modified: s.modified, Deleted: s.deleted, Backlog: s.backlog, Merged: s.merged,
		ResourceVersion: s.rv, Lists: s.lists, Watches: s.watches, Errors: s.errEvents, HeapBytes: p.heapBytes,
		Fallbacks: s.fallbacks, Restarts: s.restarts, Stalls: s.stalls, Shard: s.shard, Dropped: s.dropped,
	}
	if c := s.ckpt; c != nil {
		j.Checkpoint = &checkpointJSON{Loaded: c.loaded, LoadedObjects: c.objects, AgeSeconds: c.age.Seconds(),
			Refused: c.refused, Writes: c.writes, WriteErrors: c.errors, Bytes: c.bytes}
	}
	if s.synced {
		j.SyncSeconds = s.syncTime.Seconds()
	} else {
		j.Listed, j.Total, j.ListedPerSec = s.listed, s.total, s.listRate
		if s.etaKnown {
			j.ETASeconds = s.eta.Seconds()
		}
	}
	b, _ := json.Marshal(j) // plain fields: cannot fail
	return string(b)
}

// bytesIEC formats n as KiB/MiB/GiB with one decimal.
func bytesIEC(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGT"[exp])
}
