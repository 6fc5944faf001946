// Package listquery is the one list/watch HTTP layer of every source that
// talks to a kube-apiserver collection itself (the kube package's sources
// and its Table source, kube/table): the REST client of a collection and
// its client-side rate limits (NewClient), the query parameters of a list
// or watch (Set), a list sent once (List), a watch opened and its body's
// lifecycle (Watch, Body), and the mapping of failures onto the listwatch
// errors the reflector acts on (MapError, StatusError).
package listquery

import (
	"strconv"

	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/listwatch"
)

// Client-side rate limits of a source whose rest.Config leaves QPS and
// Burst at zero: client-go's own defaults, 5 and 10, starve informers that
// list many resources at start.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// Selectors are a source's own selectors, joined with the ones a call
// brings; Shard is a shard selector in the KEP-5866 syntax, "" for none.
type Selectors struct {
	Label, Field, Shard string
}

// Set adds to r the parameters of a list (watch false) or a watch call
// with opts, and sel. Empty values are left out.
func Set(r *rest.Request, opts listwatch.Options, watch bool, sel Selectors) *rest.Request {
	set := func(k, v string) {
		if v != "" {
			r = r.Param(k, v)
		}
	}
	if watch {
		set("watch", "true")
		if opts.AllowBookmarks {
			set("allowWatchBookmarks", "true")
		}
		if opts.SendInitialEvents {
			set("sendInitialEvents", "true")
		}
	} else {
		if opts.Limit > 0 {
			set("limit", strconv.FormatInt(opts.Limit, 10))
		}
		set("continue", opts.Continue)
	}
	set("resourceVersion", opts.ResourceVersion)
	set("resourceVersionMatch", string(opts.ResourceVersionMatch))
	set("labelSelector", join(sel.Label, opts.LabelSelector))
	set("fieldSelector", join(sel.Field, opts.FieldSelector))
	set("shardSelector", sel.Shard)
	if opts.TimeoutSeconds > 0 {
		set("timeoutSeconds", strconv.FormatInt(opts.TimeoutSeconds, 10))
	}
	return r
}

// join joins two selectors with a comma (their conjunction).
func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "," + b
}
