package listquery

import (
	"net/url"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/listwatch"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func query(opts listwatch.Options, watch bool, sel Selectors) url.Values {
	r := rest.NewRequestWithClient(&url.URL{Scheme: "https", Host: "api"}, "/api/v1", rest.ClientContentConfig{}, nil).Resource("pods")
	return Set(r, opts, watch, sel).URL().Query()
}

func TestSetListAndWatchParameters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  listwatch.Options
		watch bool
		sel   Selectors
		want  url.Values
	}{
		{"empty list", listwatch.Options{}, false, Selectors{}, url.Values{}},
		{"paged list", listwatch.Options{Limit: 500, Continue: "c", ResourceVersion: "0", ResourceVersionMatch: "NotOlderThan"}, false, Selectors{},
			url.Values{"limit": {"500"}, "continue": {"c"}, "resourceVersion": {"0"}, "resourceVersionMatch": {"NotOlderThan"}}},
		{"watch ignores paging", listwatch.Options{Limit: 500, Continue: "c", AllowBookmarks: true, SendInitialEvents: true, TimeoutSeconds: 300, ResourceVersion: "7"}, true, Selectors{},
			url.Values{"watch": {"true"}, "allowWatchBookmarks": {"true"}, "sendInitialEvents": {"true"}, "timeoutSeconds": {"300"}, "resourceVersion": {"7"}}},
		{"list ignores watch flags", listwatch.Options{AllowBookmarks: true, SendInitialEvents: true}, false, Selectors{}, url.Values{}},
		{"selectors joined", listwatch.Options{LabelSelector: "b=2", FieldSelector: "spec.nodeName=n"}, false,
			Selectors{Label: "a=1", Field: "metadata.namespace=x", Shard: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"},
			url.Values{"labelSelector": {"a=1,b=2"}, "fieldSelector": {"metadata.namespace=x,spec.nodeName=n"},
				"shardSelector": {"shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"}}},
		{"call's selector alone", listwatch.Options{LabelSelector: "b=2"}, true, Selectors{},
			url.Values{"watch": {"true"}, "labelSelector": {"b=2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := query(tc.opts, tc.watch, tc.sel); got.Encode() != tc.want.Encode() {
				t.Errorf("query %q, want %q", got.Encode(), tc.want.Encode())
			}
		})
	}
}
