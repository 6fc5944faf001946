package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
)

// column is one per-kind column: its header and how to read it from an
// object. Wide columns appear with -o wide only.
type column struct {
	header string
	wide   bool
	value  func(u *unstructured.Unstructured) string
}

// kindColumns are the columns shown for common kinds, between NAME and AGE,
// read from unstructured fields so they work whatever the server's version.
// Kinds not listed show NAME and AGE only.
var kindColumns = map[string][]column{
	"Pod": {
		{header: "READY", value: podReady},
		{header: "STATUS", value: podStatus},
		{header: "RESTARTS", value: podRestarts},
		{header: "IP", wide: true, value: str("status", "podIP")},
		{header: "NODE", wide: true, value: str("spec", "nodeName")},
	},
	"ConfigMap": {{header: "DATA", value: dataCount}},
	"Secret": {
		{header: "TYPE", value: str("type")},
		{header: "DATA", value: dataCount},
	},
	"Deployment": {
		{header: "READY", value: ratio("readyReplicas", "replicas")},
		{header: "UP-TO-DATE", value: num("status", "updatedReplicas")},
		{header: "AVAILABLE", value: num("status", "availableReplicas")},
		{header: "IMAGES", wide: true, value: images("spec", "template", "spec", "containers")},
	},
	"ReplicaSet": {
		{header: "DESIRED", value: num("spec", "replicas")},
		{header: "CURRENT", value: num("status", "replicas")},
		{header: "READY", value: num("status", "readyReplicas")},
	},
	"StatefulSet": {{header: "READY", value: ratio("readyReplicas", "replicas")}},
	"DaemonSet": {
		{header: "DESIRED", value: num("status", "desiredNumberScheduled")},
		{header: "READY", value: num("status", "numberReady")},
	},
	"Service": {
		{header: "TYPE", value: str("spec", "type")},
		{header: "CLUSTER-IP", value: str("spec", "clusterIP")},
		{header: "EXTERNAL-IP", value: serviceExternalIP},
	},
	"Namespace": {{header: "STATUS", value: str("status", "phase")}},
	"Node":      {{header: "STATUS", value: nodeStatus}},
	"Event": {
		{header: "TYPE", value: str("type")},
		{header: "REASON", value: str("reason")},
		{header: "OBJECT", value: eventObject},
	},
}

// columnsFor returns kind's columns, the wide ones only when wide is set.
func columnsFor(kind string, wide bool) []column {
	var out []column
	for _, c := range kindColumns[kind] {
		if !c.wide || wide {
			out = append(out, c)
		}
	}
	return out
}

func str(path ...string) func(*unstructured.Unstructured) string {
	return func(u *unstructured.Unstructured) string {
		s, _, _ := unstructured.NestedString(u.Object, path...)
		return orNone(s)
	}
}

func num(path ...string) func(*unstructured.Unstructured) string {
	return func(u *unstructured.Unstructured) string {
		n, _, _ := unstructured.NestedInt64(u.Object, path...)
		return strconv.FormatInt(n, 10)
	}
}

// ratio is status.<have>/spec.<want>-ish: "ready/desired", as kubectl shows
// workloads; the desired count is spec.replicas (default 1).
func ratio(have, want string) func(*unstructured.Unstructured) string {
	return func(u *unstructured.Unstructured) string {
		h, _, _ := unstructured.NestedInt64(u.Object, "status", have)
		w, found, _ := unstructured.NestedInt64(u.Object, "spec", want)
		if !found {
			w = 1
		}
		return fmt.Sprintf("%d/%d", h, w)
	}
}

func images(path ...string) func(*unstructured.Unstructured) string {
	return func(u *unstructured.Unstructured) string {
		cs, _, _ := unstructured.NestedSlice(u.Object, path...)
		var out []string
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				if img, ok := m["image"].(string); ok {
					out = append(out, img)
				}
			}
		}
		return orNone(strings.Join(out, ","))
	}
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func dataCount(u *unstructured.Unstructured) string {
	d, _, _ := unstructured.NestedMap(u.Object, "data")
	b, _, _ := unstructured.NestedMap(u.Object, "binaryData")
	return strconv.Itoa(len(d) + len(b))
}

func podReady(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "containers")
	statuses, _, _ := unstructured.NestedSlice(u.Object, "status", "containerStatuses")
	ready := 0
	for _, s := range statuses {
		if m, ok := s.(map[string]any); ok && m["ready"] == true {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(cs))
}

// podStatus is the phase, refined as kubectl does in its common cases: a
// pod being deleted is Terminating, a waiting or terminated container's
// reason wins over the phase.
func podStatus(u *unstructured.Unstructured) string {
	if u.GetDeletionTimestamp() != nil {
		return "Terminating"
	}
	status, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	if r, _, _ := unstructured.NestedString(u.Object, "status", "reason"); r != "" {
		status = r
	}
	statuses, _, _ := unstructured.NestedSlice(u.Object, "status", "containerStatuses")
	for _, s := range statuses {
		m, _ := s.(map[string]any)
		if r, _, _ := unstructured.NestedString(m, "state", "waiting", "reason"); r != "" {
			status = r
		} else if r, _, _ := unstructured.NestedString(m, "state", "terminated", "reason"); r != "" {
			status = r
		}
	}
	return orNone(status)
}

func podRestarts(u *unstructured.Unstructured) string {
	statuses, _, _ := unstructured.NestedSlice(u.Object, "status", "containerStatuses")
	var n int64
	for _, s := range statuses {
		m, _ := s.(map[string]any)
		c, _, _ := unstructured.NestedInt64(m, "restartCount")
		n += c
	}
	return strconv.FormatInt(n, 10)
}

func serviceExternalIP(u *unstructured.Unstructured) string {
	ing, _, _ := unstructured.NestedSlice(u.Object, "status", "loadBalancer", "ingress")
	var out []string
	for _, i := range ing {
		m, _ := i.(map[string]any)
		if ip, _ := m["ip"].(string); ip != "" {
			out = append(out, ip)
		} else if h, _ := m["hostname"].(string); h != "" {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		if t, _, _ := unstructured.NestedString(u.Object, "spec", "type"); t == "LoadBalancer" {
			return "<pending>"
		}
	}
	return orNone(strings.Join(out, ","))
}

func nodeStatus(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			if m["status"] == "True" {
				return "Ready"
			}
			return "NotReady"
		}
	}
	return "Unknown"
}

func eventObject(u *unstructured.Unstructured) string {
	k, _, _ := unstructured.NestedString(u.Object, "involvedObject", "kind")
	n, _, _ := unstructured.NestedString(u.Object, "involvedObject", "name")
	return strings.ToLower(k) + "/" + n
}

// age is how long ago obj was created, as kubectl shows it ("5m12s").
func age(u *unstructured.Unstructured, now time.Time) string {
	ts := u.GetCreationTimestamp()
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

// details renders kind's columns as "HEADER=value" pairs, for output that
// mixes kinds in one table.
func details(u *unstructured.Unstructured, cols []column) string {
	parts := make([]string, 0, len(cols))
	for _, c := range cols {
		parts = append(parts, c.header+"="+c.value(u))
	}
	return strings.Join(parts, " ")
}
