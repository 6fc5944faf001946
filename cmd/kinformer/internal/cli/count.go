package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/kube"
)

// countTimeout bounds the one-object list that counts a resource: the
// count only decorates the progress, it must never hold a command up.
const countTimeout = 10 * time.Second

// countObjects asks the server how many objects of t a list with sel
// holds, so that a sync can show count/total and an ETA: a streaming list
// never says how many objects it will send, and a paged one says it only
// after its first page. It lists one object's metadata; the answer is
// that object plus the list's remainingItemCount, or the items of a list
// that fits in the page. ok is false when the server does not say (it
// leaves remainingItemCount out for label and field selectors) or the
// list fails: the progress then shows no total.
func countObjects(ctx context.Context, cfg *rest.Config, t target, sel kube.Selection) (n int64, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, countTimeout)
	defer cancel()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, false
	}
	gv := "/api/" + t.res.GVR.Version
	if t.res.GVR.Group != "" {
		gv = "/apis/" + t.res.GVR.Group + "/" + t.res.GVR.Version
	}
	p := gv
	if sel.Namespace != "" {
		p = path.Join(p, "namespaces", sel.Namespace)
	}
	p = path.Join(p, t.res.GVR.Resource)
	q := url.Values{"limit": {"1"}}
	if sel.LabelSelector != "" {
		q.Set("labelSelector", sel.LabelSelector)
	}
	if sel.FieldSelector != "" {
		q.Set("fieldSelector", sel.FieldSelector)
	}
	u := strings.TrimSuffix(cfg.Host, "/") + strings.TrimSuffix(cfg.APIPath, "/") + p + "?" + q.Encode()
	if !strings.Contains(cfg.Host, "://") {
		u = "https://" + u
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, false
	}
	req.Header.Set("Accept", acceptMetadataList)
	resp, err := client.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false
	}
	var list struct {
		Metadata struct {
			Continue           string `json:"continue"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return 0, false
	}
	switch {
	case list.Metadata.Continue == "":
		return int64(len(list.Items)), true
	case list.Metadata.RemainingItemCount != nil:
		return int64(len(list.Items)) + *list.Metadata.RemainingItemCount, true
	}
	return 0, false
}
