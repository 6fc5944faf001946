// Package listquery sets the query parameters of a list or watch request
// to a kube-apiserver collection, and the client-side rate limits, for
// every source that builds its own requests (the kube package's sources
// and the CLI's table source).
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
