package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/examples/shardhash/controller"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shard/replicas"
	"github.com/kinformer/kinformer/testenv"
)

// The group's settings in the end-to-end test: short Leases, so that a
// killed replica's ranges move in seconds.
const (
	e2eObjects = 6000
	e2eSlots   = 8
	e2eLease   = 6 * time.Second
	e2eRenew   = time.Second
	e2ePoll    = 250 * time.Millisecond
	e2eGroup   = "e2e"
)

// Three replicas, as separate processes, share 6,000 ConfigMaps; one is
// killed (SIGKILL) and a new one started. After each change every object
// is owned by exactly one live replica and the replicas' caches together
// equal a fresh list; throughout, a checker sampling the Leases finds
// every object's range claimed by a Lease that stands. Once with the
// apiserver filtering by shard (ShardedListAndWatch on), once with the
// replicas filtering themselves (off).
func TestReplicasShareTheObjectsThroughAKillAndAJoin(t *testing.T) {
	for _, gate := range []bool{true, false} {
		t.Run(fmt.Sprintf("ShardedListAndWatch=%v", gate), func(t *testing.T) { testReplicas(t, gate) })
	}
}

func testReplicas(t *testing.T, gate bool) {
	env, err := testenv.Start(t.Context(), testenv.Options{
		Build:        testenv.BuildOptions{Progress: os.Stderr},
		FeatureGates: map[string]bool{"ShardedListAndWatch": gate},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			_ = env.DumpLogs(os.Stderr, 40)
		}
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	const ns = "shards"
	if err := env.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	if err := env.CreateConfigMaps(t.Context(), ns, e2eObjects, testenv.BulkOptions{}); err != nil {
		t.Fatal(err)
	}
	client := env.Clientset()
	h := &harness{t: t, env: env, client: client, ns: ns}
	defer h.stopAll()

	r0, r1, r2 := h.start("r0"), h.start("r1"), h.start("r2")
	h.awaitConverged("three replicas start", r0, r1, r2)
	h.checkPartition(r0, r1, r2)

	chk := h.startChecker()
	r1.kill()
	h.awaitConverged("r1 killed", r0, r2)
	h.checkPartition(r0, r2)
	r3 := h.start("r3")
	h.awaitConverged("r3 started", r0, r2, r3)
	h.checkPartition(r0, r2, r3)
	samples, gaps := chk.stop()
	if samples < 20 {
		t.Errorf("the checker took %d samples only", samples)
	}
	for _, g := range gaps {
		t.Errorf("unowned objects: %s", g)
	}
	for _, r := range []*proc{r0, r2, r3} {
		st := r.status(false)
		if st.Added != 0 || st.Deleted != 0 {
			t.Errorf("%s was told of %d adds and %d deletes; nothing was created or deleted", r.id, st.Added, st.Deleted)
		}
		if st.Acquired == 0 {
			t.Errorf("%s acquired nothing", r.id)
		}
	}
	t.Logf("gate %v: %d checker samples, acquisitions r0 %d r2 %d r3 %d, releases r0 %d r2 %d", gate, samples,
		r0.status(false).Acquired, r2.status(false).Acquired, r3.status(false).Acquired, r0.status(false).Released, r2.status(false).Released)
	h.checkShardsCommand(gate)
	if gate {
		h.checkStamps()
	}
}

// checkStamps runs two writing replicas (not dry-run) of another group
// over another namespace: every ConfigMap ends up stamped with its digest,
// by the replica that owns it.
func (h *harness) checkStamps() {
	h.t.Helper()
	const ns, n = "stamps", 200
	if err := h.env.CreateNamespace(h.t.Context(), ns); err != nil {
		h.t.Fatal(err)
	}
	if err := h.env.CreateConfigMaps(h.t.Context(), ns, n, testenv.BulkOptions{}); err != nil {
		h.t.Fatal(err)
	}
	flags := []string{"-namespace", ns, "-lease-namespace", ns, "-group", "stamp", "-dry-run=false"}
	a, b := h.start("a", flags...), h.start("b", flags...)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		list, err := h.client.CoreV1().ConfigMaps(ns).List(h.t.Context(), metav1.ListOptions{})
		if err != nil {
			h.t.Fatal(err)
		}
		stamped := 0
		for i := range list.Items {
			if list.Items[i].Annotations[controller.Annotation] == controller.Digest(&list.Items[i]) {
				stamped++
			}
		}
		if stamped == n {
			break
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%d of %d ConfigMaps stamped", stamped, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wa, wb := a.status(false).Written, b.status(false).Written
	if wa == 0 || wb == 0 || wa+wb < n {
		h.t.Errorf("a wrote %d stamps, b %d, for %d ConfigMaps", wa, wb, n)
	}
}

// kinformer builds the command-line tool once per test binary and runs
// it with args against the test's control plane and namespace, the way
// a person would; it returns what the command printed on stdout.
func (h *harness) kinformer(args ...string) string {
	h.t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kinformer-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliDir, cliBin = dir, filepath.Join(dir, "kinformer")
		cmd := exec.Command("go", "build", "-o", cliBin, "./cmd/kinformer")
		cmd.Dir = filepath.Join("..", "..") // the repository's root: the main module
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("building the kinformer command: %w\n%s", err, out)
		}
	})
	if cliErr != nil {
		h.t.Fatal(cliErr)
	}
	full := append([]string{"--kubeconfig", h.env.KubeconfigPath(), "-n", h.ns}, args...)
	cmd := exec.CommandContext(h.t.Context(), cliBin, full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("kinformer %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// The command, built once for the test binary by harness.kinformer and
// removed by TestMain.
var (
	cliOnce        sync.Once
	cliDir, cliBin string
	cliErr         error
)

// checkShardsCommand runs `kinformer shards`: the group view names the
// live replicas' Leases as standing and finds every range claimed; the
// resource view counts every object once and says who filtered.
func (h *harness) checkShardsCommand(gate bool) {
	h.t.Helper()
	view := h.kinformer("shards", "--group", e2eGroup)
	for _, id := range []string{"r0", "r2", "r3"} {
		if !strings.Contains(view, id+" ") {
			h.t.Errorf("shards --group: no line for %s:\n%s", id, view)
		}
	}
	if strings.Contains(view, "no standing Lease claims") {
		h.t.Errorf("shards --group: unclaimed ranges after convergence:\n%s", view)
	}
	out := h.kinformer("shards", "--split", strconv.Itoa(e2eSlots), "--by", "uid", "cm")
	by := map[bool]string{true: "by the server", false: "by kinformer"}[gate]
	total := 0
	// The table of ranges, a blank line, then the spread of each resource.
	table, spread, _ := strings.Cut(out, "\n\n")
	if want := fmt.Sprintf("configmaps: %d objects over %d ranges", e2eObjects, e2eSlots); !strings.HasPrefix(spread, want) {
		h.t.Errorf("shards: spread line %q, want it to start with %q", spread, want)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	for _, l := range lines[1:] {
		n, err := strconv.Atoi(strings.Fields(l)[4])
		if err != nil || !strings.Contains(l, by) {
			h.t.Errorf("shards: line %q (want a count and %q)", l, by)
		}
		total += n
	}
	if len(lines) != e2eSlots+1 || total != e2eObjects {
		h.t.Errorf("shards: %d ranges holding %d objects, want %d holding %d:\n%s", len(lines)-1, total, e2eSlots, e2eObjects, out)
	}
	h.checkStatsShard(gate, lines[1:])
}

// checkStatsShard runs `kinformer stats cm --shard uid:3/8 --once`: it
// caches the objects of range 3 that `shards` counted (rangeLines, one
// line per range) and says who filtered them.
func (h *harness) checkStatsShard(gate bool, rangeLines []string) {
	h.t.Helper()
	want, err := strconv.Atoi(strings.Fields(rangeLines[3])[4])
	if err != nil {
		h.t.Fatalf("shards: line %q has no count", rangeLines[3])
	}
	line := strings.TrimSpace(h.kinformer("stats", "cm", "--shard", fmt.Sprintf("uid:3/%d", e2eSlots),
		"--once", "--interval", "200ms", "-o", "kv"))
	mode := map[bool]string{true: "server", false: "client"}[gate]
	for _, kv := range []string{fmt.Sprintf(" objects=%d ", want), " shard=" + mode + " "} {
		if !strings.Contains(line, kv) {
			h.t.Errorf("stats --shard: %q lacks %q", line, strings.TrimSpace(kv))
		}
	}
	if dropped := strings.Contains(line, " dropped=0 "); dropped != gate {
		h.t.Errorf("stats --shard: %q: with the gate %v the client should drop %s", line, gate,
			map[bool]string{true: "nothing", false: "the other ranges' objects"}[gate])
	}
}

// harness starts replicas against one control plane.
type harness struct {
	t      *testing.T
	env    *testenv.Env
	client kubernetes.Interface
	ns     string
	mu     sync.Mutex
	procs  []*proc
}

// proc is one replica process.
type proc struct {
	t      *testing.T
	id     string
	cmd    *exec.Cmd
	url    string
	log    string
	exited chan struct{}
}

// start starts a dry-run replica of the test's group; extra flags are
// added after the test's own (so they win).
func (h *harness) start(id string, extra ...string) *proc {
	h.t.Helper()
	args, _ := json.Marshal(append([]string{
		"-kubeconfig", h.env.KubeconfigPath(), "-namespace", h.ns, "-lease-namespace", h.ns,
		"-group", e2eGroup, "-identity", id, "-slots", strconv.Itoa(e2eSlots),
		"-lease-duration", e2eLease.String(), "-renew-period", e2eRenew.String(), "-poll-period", e2ePoll.String(),
		"-dry-run", "-addr", "127.0.0.1:0",
	}, extra...))
	logPath := filepath.Join(h.t.TempDir(), id+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		h.t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"=1", replicaArgsEnv+"="+string(args))
	cmd.Stderr = logFile
	cmd.SysProcAttr = dieWithParent()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	p := &proc{t: h.t, id: id, cmd: cmd, log: logPath, exited: make(chan struct{})}
	h.mu.Lock()
	h.procs = append(h.procs, p)
	h.mu.Unlock()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		h.t.Fatalf("%s: no address: %v\n%s", id, err, tail(logPath))
	}
	p.url = strings.TrimSpace(strings.TrimPrefix(line, "serving "))
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(p.exited)
	}()
	return p
}

// kill sends SIGKILL: no goodbye, the Lease stays behind.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// stopAll stops the replicas still running with SIGTERM (they hand their
// ranges over and delete their Leases), and waits for them.
func (h *harness) stopAll() {
	h.mu.Lock()
	procs := slices.Clone(h.procs)
	h.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(os.Interrupt)
	}
	for _, p := range procs {
		select {
		case <-p.exited:
		case <-time.After(2 * e2eLease):
			h.t.Errorf("%s did not stop", p.id)
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if h.t.Failed() {
			h.t.Logf("%s log:\n%s", p.id, tail(p.log))
		}
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}

// status reads the replica's /debug/shard.
func (p *proc) status(objects bool) controller.Status {
	p.t.Helper()
	st, err := p.tryStatus(objects)
	if err != nil {
		p.t.Fatalf("%s: %v", p.id, err)
	}
	return st
}

func (p *proc) tryStatus(objects bool) (controller.Status, error) {
	var st controller.Status
	u := p.url + "/debug/shard"
	if objects {
		u += "?objects=1"
	}
	resp, err := http.Get(u)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// awaitConverged waits until the live replicas see exactly each other and
// each owns exactly what the split assigns it.
func (h *harness) awaitConverged(what string, live ...*proc) {
	h.t.Helper()
	var ids []string
	for _, p := range live {
		ids = append(ids, p.id)
	}
	owner := replicas.Assign(ids, e2eSlots)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		why := ""
		for _, p := range live {
			st, err := p.tryStatus(false)
			if err != nil {
				why = err.Error()
				break
			}
			var want []int
			for s, o := range owner {
				if o == p.id {
					want = append(want, s)
				}
			}
			if !slices.Equal(st.Group.Members, ids) || !slices.Equal(st.Group.Owned, want) {
				why = fmt.Sprintf("%s: members %v, owns %v, should own %v", p.id, st.Group.Members, st.Group.Owned, want)
				break
			}
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: not converged: %s", what, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkPartition checks that every object of a fresh list is cached by
// exactly one live replica, at the listed version, and nothing else is.
func (h *harness) checkPartition(live ...*proc) {
	h.t.Helper()
	list, err := h.client.CoreV1().ConfigMaps(h.ns).List(h.t.Context(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	want := map[string]controller.Object{}
	for _, cm := range list.Items {
		want[cm.Name] = controller.Object{Namespace: cm.Namespace, Name: cm.Name, UID: string(cm.UID), ResourceVersion: cm.ResourceVersion}
	}
	got := map[string]controller.Object{}
	for _, p := range live {
		for _, o := range p.status(true).Objects {
			if _, dup := got[o.Name]; dup {
				h.t.Errorf("%s is cached by two replicas", o.Name)
			}
			got[o.Name] = o
		}
	}
	if !maps.Equal(got, want) {
		n := 0
		for k := range want {
			if got[k] != want[k] {
				n++
			}
		}
		h.t.Errorf("the replicas cache %d objects, the server lists %d; %d differ", len(got), len(want), n)
	}
}

// checker samples the group's Leases and records every sample at which an
// object's range had no claim standing (by the Lease's own renewTime).
type checker struct {
	cancel  context.CancelFunc
	done    chan struct{}
	samples int
	gaps    []string
}

func (h *harness) startChecker() *checker {
	h.t.Helper()
	list, err := h.client.CoreV1().ConfigMaps(h.ns).List(h.t.Context(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	ranges := shard.Split(e2eSlots)
	objectsIn := make([]int, e2eSlots)
	for i := range list.Items {
		hash := shard.HashOf(&list.Items[i], shard.UID)
		for s, r := range ranges {
			if r.Contains(hash) {
				objectsIn[s]++
			}
		}
	}
	ctx, cancel := context.WithCancel(h.t.Context())
	c := &checker{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			leases, err := h.client.CoordinationV1().Leases(h.ns).List(ctx, metav1.ListOptions{LabelSelector: replicas.GroupLabel + "=" + e2eGroup})
			if err != nil {
				continue
			}
			now := time.Now()
			claimed := make([]bool, e2eSlots)
			for _, l := range leases.Items {
				if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil ||
					now.Sub(l.Spec.RenewTime.Time) >= time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second {
					continue
				}
				for part := range strings.SplitSeq(l.Annotations[replicas.RangesAnnotation], ",") {
					if s, err := strconv.Atoi(part); err == nil && s >= 0 && s < e2eSlots {
						claimed[s] = true
					}
				}
			}
			c.samples++
			for s, ok := range claimed {
				if !ok && objectsIn[s] > 0 {
					c.gaps = append(c.gaps, fmt.Sprintf("at %s, range %d (%d objects) had no standing claim", now.Format(time.StampMilli), s, objectsIn[s]))
				}
			}
		}
	}()
	return c
}

func (c *checker) stop() (samples int, gaps []string) {
	c.cancel()
	<-c.done
	return c.samples, c.gaps
}
