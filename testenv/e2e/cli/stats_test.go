package cli_test

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kinformer/kinformer/testenv"
)

func TestStatsOnceReportsEachInformer(t *testing.T) {
	ns := namespace(t, "cli-stats")
	if err := env.CreateConfigMaps(t.Context(), ns, 25, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := env.CreatePods(t.Context(), ns, 7, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	r := kinformer(t, "stats", "configmaps,po", "-n", ns, "--once", "--interval", "200ms")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	got := map[string]map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		kv := keyValues(line)
		if kv["namespace"] != ns {
			t.Errorf("line for namespace %q: %q", kv["namespace"], line)
		}
		got[kv["resource"]] = kv
	}
	for res, want := range map[string]int{"configmaps": 25, "pods": 7} {
		kv, ok := got[res]
		if !ok {
			t.Errorf("no line for %s in %q", res, r.stdout)
			continue
		}
		if n, _ := strconv.Atoi(kv["objects"]); n != want {
			t.Errorf("%s: objects=%s, want %d", res, kv["objects"], want)
		}
		if kv["synced"] != "true" {
			t.Errorf("%s: synced=%s", res, kv["synced"])
		}
		if rv, err := strconv.ParseUint(kv["rv"], 10, 64); err != nil || rv == 0 {
			t.Errorf("%s: rv=%q, want a resource version", res, kv["rv"])
		}
		for _, k := range []string{"added/s", "modified/s", "deleted/s", "backlog", "merged", "sync", "heap"} {
			if _, ok := kv[k]; !ok {
				t.Errorf("%s: no %s in %v", res, k, kv)
			}
		}
	}
}

func TestStatsServesMetricsAndProfiles(t *testing.T) {
	ns := namespace(t, "cli-metrics")
	createConfigMap(t, ns, "one", nil, nil)
	s := start(t, []string{"KUBECONFIG=" + env.KubeconfigPath()}, kinformerBin,
		"stats", "cm", "-n", ns, "--interval", "200ms", "--metrics-addr", ":0")
	ctx := within(t, time.Minute)
	addrRe := regexp.MustCompile(`serving metrics on http://(127\.0\.0\.1:\d+)/metrics`)
	i := s.stderr.waitFor(ctx, t, 0, "the metrics address", addrRe.MatchString)
	addr := addrRe.FindStringSubmatch(s.stderr.snapshot()[i])[1]
	s.stdout.waitFor(ctx, t, 0, "a synced sample", func(l string) bool { return keyValues(l)["synced"] == "true" })

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(path string) string {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(b)
	}
	m := get("/metrics")
	for _, want := range []string{
		`kinformer_reflector_events_total{name="configmaps -n ` + ns + `",type="ADDED"}`,
		`kinformer_informer_handler_backlog{handler="kinformer-cli",name="configmaps -n ` + ns + `"}`,
		"go_goroutines",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if p := get("/debug/pprof/"); !strings.Contains(p, "goroutine") {
		t.Errorf("/debug/pprof/ does not list profiles")
	}
	if code := s.interrupt(ctx, t); code != 0 {
		t.Errorf("exit %d after Ctrl-C", code)
	}
}

// With --checkpoint-dir, a second `stats --once` starts from the first's
// checkpoint and says so (checkpoint=loaded:N), the first having said it
// started cold and wrote one.
func TestStatsStartsFromItsCheckpoint(t *testing.T) {
	ns := namespace(t, "cli-ckpt")
	if err := env.CreateConfigMaps(t.Context(), ns, 12, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func() map[string]string {
		t.Helper()
		r := kinformer(t, "stats", "configmaps", "-n", ns, "--once", "--interval", "200ms", "--checkpoint-dir", dir, "-o", "kv")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return keyValues(strings.TrimSpace(r.stdout))
	}
	if kv := run(); kv["checkpoint"] != "cold" || kv["objects"] != "12" {
		t.Fatalf("first run: checkpoint=%q objects=%q, want a cold start of 12", kv["checkpoint"], kv["objects"])
	}
	kv := run()
	if !strings.HasPrefix(kv["checkpoint"], "loaded:12,") || kv["objects"] != "12" {
		t.Fatalf("second run: checkpoint=%q objects=%q, want a start from the first's 12", kv["checkpoint"], kv["objects"])
	}
}
