package cli

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// tableResponse writes a Table of rows (name, age), each row's object
// holding its metadata when withMeta, else none (includeObject=None).
func tableResponse(w http.ResponseWriter, ns string, names []string, withMeta bool) {
	var rows []string
	for _, n := range names {
		obj := "null"
		if withMeta {
			obj = fmt.Sprintf(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":%q,"namespace":%q,"uid":"u-%s","resourceVersion":"5"}}`, n, ns, n)
		}
		rows = append(rows, fmt.Sprintf(`{"cells":[%q,"1m"],"object":%s}`, n, obj))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},`+
		`"columnDefinitions":[{"name":"Name","type":"string","format":"name"},{"name":"Age","type":"string"}],"rows":[%s]}`, strings.Join(rows, ","))
}

// tableCluster serves namespaces a and b (unless namespacesForbidden) and
// pods web-0 in a and web-1, web-2 in b, per namespace or across them, and
// records the pod requests made across namespaces.
type tableCluster struct {
	namespacesForbidden bool

	mu     sync.Mutex
	across []string // query strings of the pod requests without a namespace
}

func (c *tableCluster) serve(w http.ResponseWriter, r *http.Request) {
	pods := map[string][]string{"a": {"web-0"}, "b": {"web-1", "web-2"}}
	q := r.URL.Query()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/api/v1/namespaces":
		if c.namespacesForbidden {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"namespaces is forbidden","reason":"Forbidden","code":403}`)
			return
		}
		tableResponse(w, "", []string{"a", "b"}, false)
	case len(parts) == 5 && parts[4] == "pods": // api/v1/namespaces/NS/pods
		if q.Get("watch") == "true" {
			<-r.Context().Done()
			return
		}
		tableResponse(w, parts[3], pods[parts[3]], q.Get("includeObject") != "None")
	case r.URL.Path == "/api/v1/pods":
		c.mu.Lock()
		c.across = append(c.across, r.URL.RawQuery)
		c.mu.Unlock()
		switch {
		case q.Get("sendInitialEvents") == "true":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"sendInitialEvents is forbidden","reason":"Invalid","code":422}`)
		case q.Get("watch") == "true":
			<-r.Context().Done()
		default:
			// One table across namespaces: each row's namespace is in
			// its metadata only.
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"5"},`+
				`"columnDefinitions":[{"name":"Name","type":"string","format":"name"},{"name":"Age","type":"string"}],"rows":[`+
				`{"cells":["web-0","1m"],"object":{"metadata":{"name":"web-0","namespace":"a","uid":"u0","resourceVersion":"5"}}},`+
				`{"cells":["web-1","1m"],"object":{"metadata":{"name":"web-1","namespace":"b","uid":"u1","resourceVersion":"5"}}},`+
				`{"cells":["web-2","1m"],"object":{"metadata":{"name":"web-2","namespace":"b","uid":"u2","resourceVersion":"5"}}}]}`)
		}
	default:
		http.NotFound(w, r)
	}
}

const tableAcrossNamespaces = "NAMESPACE   NAME    AGE\na           web-0   1m\nb           web-1   1m\nb           web-2   1m\n"

// get -A of a table lists the namespaces, then each one's rows without
// their objects (whose metadata is most of the bytes): the same table,
// and no request across namespaces.
func TestGetTableAcrossNamespacesListsEachNamespace(t *testing.T) {
	c := &tableCluster{}
	global := fakeCluster(t, c.serve)
	var out, errOut strings.Builder
	if err := Execute(t.Context(), Streams{Out: &out, ErrOut: &errOut}, []string{"get", "pods", "-A", "--kubeconfig", global.Kubeconfig}); err != nil {
		t.Fatal(err, errOut.String())
	}
	if out.String() != tableAcrossNamespaces {
		t.Errorf("stdout\n%s\nwant\n%s", out.String(), tableAcrossNamespaces)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.across {
		if !strings.Contains(q, "limit=1") { // the count of the progress line
			t.Errorf("pods listed across namespaces (%s): each namespace should be listed on its own", q)
		}
	}
}

// Where namespaces cannot be listed, get -A lists across namespaces with
// each row's metadata, as before: the same table.
func TestGetTableAcrossNamespacesWithoutNamespacesFallsBack(t *testing.T) {
	c := &tableCluster{namespacesForbidden: true}
	global := fakeCluster(t, c.serve)
	var out, errOut strings.Builder
	if err := Execute(t.Context(), Streams{Out: &out, ErrOut: &errOut}, []string{"get", "pods", "-A", "--kubeconfig", global.Kubeconfig}); err != nil {
		t.Fatal(err, errOut.String())
	}
	if out.String() != tableAcrossNamespaces {
		t.Errorf("stdout\n%s\nwant\n%s", out.String(), tableAcrossNamespaces)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.across) == 0 {
		t.Error("no request across namespaces: the fallback did not list")
	}
}
