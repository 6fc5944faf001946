// Package metrics defines what kinformer's packages report and leaves the
// choice of backend to the caller.
//
// # Providers and instruments
//
// A [Provider] is asked once per reporting object (a reflector, an
// informer, a handler registration) for a set of instruments, and the
// object then updates those instruments itself. Work queues have their own
// [WorkqueueProvider], sharded sources and replica groups their
// [ShardProvider]. A nil provider, and a nil instrument inside a
// returned set, both mean "do not report": callers replace a nil
// instrument with [Discard], so a provider only fills in what it supports.
// A provider that supports a few sets embeds [Nop], which answers every
// method with the empty set, and writes only the methods it needs.
//
// The instruments are the three primitives [Counter], [Gauge] and
// [Histogram]. They are deliberately smaller than any backend's types, so
// that a Prometheus, OpenTelemetry or test implementation is a few lines.
// Implementations must be safe for concurrent use and must not block: they
// are called on hot paths, sometimes with the reporting object's lock held.
//
// # Vocabulary
//
// Each quantity is reported once, by the object that owns it: a shared
// informer's lists and watches are its reflector's, under the informer's
// name. The names below are those of the Prometheus implementation
// (sub-package prometheus), before its optional namespace prefix. Every
// series has a "name" label: the reflector's or informer's name (handler
// series: the informer's). Durations are in seconds.
//
// Reflector ([ReflectorMetrics]). <Mode> is Paged or Streaming, the value
// of the "mode" label ("paged", "streaming"); <Type> is Added, Modified,
// Deleted, Bookmark or Error, the value of the "type" label ("ADDED", ...).
// The labels column lists the labels besides "name":
//
//	field                    metric                                type       labels  meaning
//	<Mode>Lists.Attempts     reflector_lists_total                 counter    mode    lists started
//	<Mode>Lists.Errors       reflector_list_errors_total           counter    mode    lists failed (streaming: each one a fallback to paged)
//	<Mode>Lists.Duration     reflector_list_duration_seconds       histogram  mode    duration of each list
//	<Mode>Lists.Items        reflector_list_items                  histogram  mode    objects stored by each successful list
//	<Mode>Lists.Last         reflector_last_list_mode              gauge      mode    1 for the mode of the last successful list, else 0
//	Watches                  reflector_watches_total               counter            watches read (opened, or carried on from a streaming list)
//	WatchErrors              reflector_watch_errors_total          counter            watches failed to open, failed, or ended by an Error event
//	WatchDuration            reflector_watch_duration_seconds      histogram          how long each watch was read
//	ShortWatches             reflector_short_watches_total         counter            watches closed in under 1s without events
//	StalledWatches           reflector_stalled_watches_total       counter            watches silent past timeout + bookmark interval, reopened
//	<Type>Events             reflector_events_total                counter    type    watch events: ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
//	Skipped                  reflector_skipped_total               counter            objects and events dropped as unusable
//	Backoff                  reflector_backoff_seconds             histogram          back-off delays before retries
//	LastResourceVersion      reflector_last_resource_version       gauge              resource version the store reflects
//	Failures                 reflector_failures_total              counter    reason  failed requests, by reason (Failure*)
//	Failing                  reflector_failing                     gauge      reason  1 for the latest failure's reason until a request succeeds
//
// Shared informer or plain controller ([InformerMetrics]), label name:
//
//	field       metric                    type   meaning
//	QueueDepth  informer_queue_depth      gauge  keys waiting in the delta queue
//	Objects     informer_objects          gauge  objects in the cache
//	Lag         informer_lag_seconds      gauge  time from a received change to its being cached (sampled)
//
// An informer's checkpoint ([CheckpointMetrics]), label name (and reason):
//
//	field          metric                                      type       meaning
//	Loaded         informer_checkpoint_loads_total             counter    checkpoints whose objects were read and checked (see CheckpointMetrics)
//	LoadedObjects  informer_checkpoint_loaded_objects          gauge      objects of the last checkpoint read
//	LoadedAge      informer_checkpoint_loaded_age_seconds      gauge      age of the last checkpoint read, when read
//	Refused        informer_checkpoint_refused_total           counter    checkpoints refused, by reason (CheckpointRefused*)
//	Writes         informer_checkpoint_writes_total            counter    checkpoints written
//	WriteErrors    informer_checkpoint_write_errors_total      counter    checkpoint writes that failed
//	WrittenBytes   informer_checkpoint_bytes                   gauge      size of the last checkpoint written
//	WriteDuration  informer_checkpoint_write_duration_seconds  histogram  duration of each write
//
// Handler registration of a shared informer ([HandlerMetrics]), labels name
// and handler:
//
//	field    metric                             type       meaning
//	Backlog  informer_handler_backlog           gauge      handler calls pending; moves on every enqueue, merge and dequeue
//	Merged   informer_handler_merged_total      counter    notifications merged into a pending one (handler behind)
//	Latency  informer_handler_duration_seconds  histogram  duration of each handler call
//	Panics   informer_handler_panics_total      counter    handler calls that panicked
//
// Work queue ([WorkqueueMetrics]), label name; the labels column lists the
// labels besides "name" (priority: the int priority, "0" for Add, "-100"
// for PriorityLow):
//
//	field                   metric                                       type       labels    meaning
//	(sampled) Depth         workqueue_depth                              gauge      priority  items waiting for a worker, per priority
//	Adds                    workqueue_adds_total                         counter              adds that made an item wait
//	QueueLatency(p)         workqueue_queue_duration_seconds             histogram  priority  wait from add to Get of items handed out at p
//	WorkDuration            workqueue_work_duration_seconds              histogram            time held by a worker, Get to Done
//	Retries                 workqueue_retries_total                      counter              rate-limited adds
//	(sampled) Unfinished    workqueue_unfinished_work_seconds            gauge                summed running time of items held now
//	(sampled) Longest       workqueue_longest_running_processor_seconds  gauge                running time of the item held longest
//	(sampled) Oldest        workqueue_oldest_waiting_seconds             gauge      priority  age of the item waiting longest, per priority
//
// The sampled gauges are read from the queue when scraped (a
// [WorkqueueSampler]), so they cost nothing between scrapes.
//
// Shard-filtered source ([ShardMetrics]), label name (the informer's):
//
//	field       metric               type     meaning
//	ServerSide  shard_server_side    gauge    1 while the server applies the shard selector, 0 while the source filters it
//	Dropped     shard_dropped_total  counter  objects received outside the shard, dropped on the client side
//
// Replica of a sharded group ([ReplicaMetrics]), label name (the group's);
// the labels column lists the labels besides "name":
//
//	field         metric                     type       labels     meaning
//	Members       shard_members              gauge                 live members this replica sees, itself included
//	RangesOwned   shard_ranges_owned         gauge                 ranges this replica owns (synced and claimed)
//	ObjectsOwned  shard_objects_owned        gauge                 objects cached in those ranges
//	Acquired      shard_handoffs_total       counter    direction  ranges taken over ("acquired")
//	Released      shard_handoffs_total       counter    direction  ranges given up ("released")
//	Convergence   shard_convergence_seconds  histogram             from a change of the member set to owning exactly this replica's share
package metrics
