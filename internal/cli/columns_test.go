package cli

import (
	"strings"
	"testing"
	"time"
)

func TestKindColumnsReadUnstructuredFields(t *testing.T) {
	running := obj("Pod", "web", "web-0", 90*time.Second, map[string]any{
		"spec": map[string]any{"nodeName": "node-1", "containers": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}},
		"status": map[string]any{"phase": "Running", "podIP": "10.1.2.3", "containerStatuses": []any{
			map[string]any{"ready": true, "restartCount": int64(2)},
			map[string]any{"ready": false, "restartCount": int64(1), "state": map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff"}}},
		}},
	})
	pending := obj("Pod", "web", "web-1", 3*time.Hour, map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": "a"}}},
	})
	cm := obj("ConfigMap", "web", "conf", 49*time.Hour, map[string]any{
		"data": map[string]any{"a": "1", "b": "2"}, "binaryData": map[string]any{"c": "AA=="},
	})
	deploy := obj("Deployment", "web", "web", time.Minute, map[string]any{
		"spec":   map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "nginx:1"}}}}},
		"status": map[string]any{"readyReplicas": int64(2), "updatedReplicas": int64(3), "availableReplicas": int64(2)},
	})
	for _, tc := range []struct {
		name string
		row  func() []string
		want string
	}{
		{"running pod, wide", func() []string {
			return newTableLayout([]target{podTarget("web")}, false, true).row("", podTarget("web"), running, testNow)
		}, "web-0 1/2 CrashLoopBackOff 3 10.1.2.3 node-1 90s"},
		{"pending pod", func() []string {
			return newTableLayout([]target{podTarget("web")}, true, false).row("ADDED", podTarget("web"), pending, testNow)
		}, "ADDED web-1 0/1 <none> 0 3h"},
		{"configmap", func() []string {
			return tableLayout{cols: columnsFor("ConfigMap", false)}.row("", target{}, cm, testNow)
		}, "conf 3 2d1h"},
		{"deployment, wide", func() []string {
			return newTableLayout([]target{deployTarget("web", 0)}, false, true).row("", deployTarget("web", 0), deploy, testNow)
		}, "web 2/3 3 2 nginx:1 60s"},
		{"mixed kinds, every namespace", func() []string {
			ts := []target{podTarget(""), deployTarget("", 1)}
			return newTableLayout(ts, true, false).row("DELETED", ts[1], deploy, testNow)
		}, "DELETED web deployment.apps/web 60s READY=2/3 UP-TO-DATE=3 AVAILABLE=2"},
	} {
		if got := strings.Join(tc.row(), " "); got != tc.want {
			t.Errorf("%s: row %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTableHeaders(t *testing.T) {
	for _, tc := range []struct {
		layout tableLayout
		want   string
	}{
		{newTableLayout([]target{podTarget("default")}, true, false), "EVENT NAME READY STATUS RESTARTS AGE"},
		{newTableLayout([]target{podTarget("")}, false, true), "NAMESPACE NAME READY STATUS RESTARTS IP NODE AGE"},
		{newTableLayout([]target{podTarget("a"), deployTarget("a", 1)}, false, false), "NAME AGE DETAILS"},
	} {
		if got := strings.Join(tc.layout.header(), " "); got != tc.want {
			t.Errorf("header %q, want %q", got, tc.want)
		}
	}
}

func TestRowWriterPadsToTheWidestCellSoFar(t *testing.T) {
	var b strings.Builder
	rw := &rowWriter{w: &b}
	rw.fit([][]string{{"NAME", "AGE"}, {"a-long-name", "1s"}})
	rw.write([]string{"NAME", "AGE"})
	rw.write([]string{"a-long-name", "1s"})
	rw.write([]string{"an-even-longer-name", "2s"})
	want := "NAME          AGE\n" +
		"a-long-name   1s\n" +
		"an-even-longer-name   2s\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
