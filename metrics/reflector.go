package metrics

// ReflectorMetrics is the set of instruments one reflector updates, all
// from its list-watch goroutine: its traffic with the source. Any field may
// be nil, meaning "not reported"; the zero value reports nothing.
// Durations are in seconds, measured on the reflector's clock.
type ReflectorMetrics struct {
	// PagedLists and StreamingLists are the lists that fill the store, by
	// mode. A paged list is a plain LIST, in one or more pages (see
	// reflector.Settings.PageSize). A streaming list is a watch with
	// initial events, read up to the bookmark that ends them; the same
	// stream then carries on as the watch. A streaming list that fails is
	// followed at once by a paged list, so StreamingLists.Errors also
	// counts fallbacks.
	PagedLists     ListMetrics
	StreamingLists ListMetrics
	// Watches counts watches read, whether opened by the reflector or
	// carried on from a streaming list; WatchErrors counts watches that
	// failed to open, failed while read or delivered an Error event.
	// WatchDuration observes how long each watch was read.
	Watches       Counter
	WatchErrors   Counter
	WatchDuration Histogram
	// ShortWatches counts watches that ended cleanly in under a second
	// without an event (each is followed by a relist after a back-off).
	ShortWatches Counter
	// StalledWatches counts watches closed by the reflector because
	// nothing came through them past their timeout plus the bookmark
	// interval (each is reopened at once).
	StalledWatches Counter
	// AddedEvents, ModifiedEvents, DeletedEvents, BookmarkEvents and
	// ErrorEvents count the events of watches, by type, once the store is
	// filled: a streaming list's initial events count in
	// StreamingLists.Items, not here.
	AddedEvents    Counter
	ModifiedEvents Counter
	DeletedEvents  Counter
	BookmarkEvents Counter
	ErrorEvents    Counter
	// Skipped counts listed objects and events dropped as unusable: not
	// decodable into the informer's type, nil, or without a key.
	Skipped Counter
	// Backoff observes every back-off delay before a retry.
	Backoff Histogram
	// Failures returns the counter of failed requests to the source (a
	// list, a watch, a watch's Error event) for reason, one of the
	// Failure* values. nil: not reported.
	Failures func(reason string) Counter
	// Failing returns the gauge of reason: 1 for the reason of the latest
	// failure while no request has succeeded since, 0 otherwise. Through
	// an outage it follows the cause as it changes (the server shutting
	// down, then refusing connections). nil: not reported.
	Failing func(reason string) Gauge
	// LastResourceVersion is set to the version the store reflects after
	// each list, event and bookmark, when it parses as a number (etcd's
	// do).
	LastResourceVersion Gauge
}

// Reasons of ReflectorMetrics.Failures and Failing.
const (
	FailureConnectionRefused = "connection-refused" // nothing listens at the server's address
	FailureConnectionReset   = "connection-reset"   // the connection was cut
	FailureUnreachable       = "unreachable"        // no answer otherwise (no route, DNS, lost HTTP/2 connection)
	FailureShuttingDown      = "shutting-down"      // the server answered that it is shutting down
	FailureUnavailable       = "unavailable"        // 503: the server (or the API service behind it) is not ready
	FailureThrottled         = "throttled"          // 429: too many requests
	FailureTimeout           = "timeout"            // the request timed out
	FailureServerError       = "server-error"       // another 5xx
	FailureDenied            = "denied"             // 401 or 403
	FailureExpired           = "expired"            // 410: the version asked for is gone (a relist follows)
	FailureTooLargeVersion   = "too-large-version"  // the server is behind the version asked for
	FailureOther             = "other"              // anything else (a malformed answer, 4xx)
)

// ListMetrics is the set of instruments of one list mode (see
// ReflectorMetrics.PagedLists). Any field may be nil.
type ListMetrics struct {
	// Attempts counts lists started, and Errors those that failed: the
	// source's error, a list without a resource version, the store
	// refusing it. A paged list refused as expired and retried at once
	// at "" (a consistent read) counts as two attempts.
	Attempts Counter
	Errors   Counter
	// Duration observes how long each list took, failed ones and an
	// immediate retry included.
	Duration Histogram
	// Items observes how many objects each successful list put in the
	// store.
	Items Histogram
	// Last is set to 1 when a list of this mode fills the store, and to 0
	// when a list of the other mode does: it tells which mode the last
	// successful sync used. Both modes read 0 before the first one.
	Last Gauge
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m ListMetrics) WithDefaults() ListMetrics {
	orDiscard([]*Counter{&m.Attempts, &m.Errors}, []*Gauge{&m.Last}, []*Histogram{&m.Duration, &m.Items})
	return m
}

// WithDefaults returns m with every nil instrument replaced by [Discard].
func (m ReflectorMetrics) WithDefaults() ReflectorMetrics {
	m.PagedLists = m.PagedLists.WithDefaults()
	m.StreamingLists = m.StreamingLists.WithDefaults()
	orDiscard(
		[]*Counter{&m.Watches, &m.WatchErrors, &m.ShortWatches, &m.StalledWatches, &m.AddedEvents, &m.ModifiedEvents,
			&m.DeletedEvents, &m.BookmarkEvents, &m.ErrorEvents, &m.Skipped},
		[]*Gauge{&m.LastResourceVersion},
		[]*Histogram{&m.WatchDuration, &m.Backoff})
	if m.Failures == nil {
		m.Failures = func(string) Counter { return Discard{} }
	}
	if m.Failing == nil {
		m.Failing = func(string) Gauge { return Discard{} }
	}
	return m
}
