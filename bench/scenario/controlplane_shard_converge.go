package scenario

// shard-converge: replica children and the parent's measurement (see the
// top of controlplane_shard.go).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/shard/replicas"
)

// runReplica is a shard-converge replica: a Group member over the pods,
// until ctx is done or the process is killed. It prints "ready" once its
// Group runs.
func runReplica(ctx context.Context, id, kubeconfig string) error {
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	pods, err := replicas.NewInformer(replicas.InformerOptions[*corev1.Pod]{
		Name: "pods",
		NewSource: func(set shard.Set) (listwatch.ListerWatcher[*corev1.Pod], error) {
			return kube.Source[*corev1.Pod](ctx, cfg, kube.SourceOptions{Selection: kube.Selection{Shard: set}})
		},
	})
	if err != nil {
		return err
	}
	g, err := replicas.NewGroup(replicas.GroupOptions{
		Name: shardGroup, Namespace: shardLeaseNS, Identity: id, Client: cs.CoordinationV1(),
		Slots: shardSlots, LeaseDuration: ShardLeaseDuration, RenewPeriod: shardRenew, PollPeriod: shardPoll,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	if err := g.Add(pods); err != nil {
		return err
	}
	fmt.Println("ready")
	return g.Run(ctx)
}

// replicaProc is a running shard-converge replica.
type replicaProc struct {
	id     string
	cmd    *exec.Cmd
	exited chan struct{}
}

func startReplica(ctx context.Context, self, id, kubeconfig string) (*replicaProc, error) {
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), ChildReplicaEnv+"="+id, ChildKubeconfigEnv+"="+kubeconfig)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &replicaProc{id: id, cmd: cmd, exited: make(chan struct{})}
	line, err := bufio.NewReader(out).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, out); _ = cmd.Wait(); close(p.exited) }()
	if err != nil || strings.TrimSpace(line) != "ready" {
		p.kill()
		return nil, fmt.Errorf("replica %s did not start: %q, %v", id, line, err)
	}
	return p, nil
}

func (p *replicaProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

func (p *replicaProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(3 * ShardLeaseDuration):
		p.kill()
	}
}

// claims reads the group's Leases: the slots each identity claims with a
// Lease that stands now.
func claims(ctx context.Context, cs kubernetes.Interface) (map[string][]int, error) {
	list, err := cs.CoordinationV1().Leases(shardLeaseNS).List(ctx, metav1.ListOptions{LabelSelector: replicas.GroupLabel + "=" + shardGroup})
	if err != nil {
		return nil, err
	}
	out := map[string][]int{}
	now := time.Now()
	for _, l := range list.Items {
		if l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil ||
			now.Sub(l.Spec.RenewTime.Time) >= time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second {
			continue
		}
		var slots []int
		for part := range strings.SplitSeq(l.Annotations[replicas.RangesAnnotation], ",") {
			if s, err := strconv.Atoi(part); err == nil {
				slots = append(slots, s)
			}
		}
		out[*l.Spec.HolderIdentity] = slots
	}
	return out, nil
}

// awaitClaims polls the Leases until every slot is claimed by exactly the
// replica the split of live assigns it (all, when exact is set) or at
// least by one of live, and returns when that first held.
func awaitClaims(ctx context.Context, cs kubernetes.Interface, live []string, exact bool) (time.Time, error) {
	owner := replicas.Assign(live, shardSlots)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		c, err := claims(ctx, cs)
		if err != nil {
			return time.Time{}, err
		}
		now := time.Now()
		ok := true
		for s := range shardSlots {
			var by []string
			for id, slots := range c {
				if slices.Contains(slots, s) {
					by = append(by, id)
				}
			}
			if exact {
				ok = ok && slices.Equal(by, []string{owner[s]})
			} else {
				ok = ok && slices.ContainsFunc(by, func(id string) bool { return slices.Contains(live, id) })
			}
		}
		if ok {
			return now, nil
		}
		if now.After(deadline) {
			return time.Time{}, fmt.Errorf("claims %v never matched the live replicas %v", c, live)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// measureConverge runs shard-converge (see the top of this file).
func measureConverge(ctx context.Context, opts ShardOptions, self, ours, kubeconfig string, cs kubernetes.Interface,
	countIn func(shard.Set) int, say func(string, ...any)) (Report, error) {
	var procs []*replicaProc
	defer func() {
		for _, p := range procs {
			p.stop()
		}
	}()
	next := 0
	start := func() error {
		p, err := startReplica(ctx, self, fmt.Sprintf("r%d", next), kubeconfig)
		if err != nil {
			return err
		}
		next++
		procs = append(procs, p)
		return nil
	}
	ids := func() []string {
		var out []string
		for _, p := range procs {
			out = append(out, p.id)
		}
		return out
	}
	for range 3 {
		if err := start(); err != nil {
			return Report{}, err
		}
	}
	if _, err := awaitClaims(ctx, cs, ids(), true); err != nil {
		return Report{}, err
	}
	ranges := shard.Split(shardSlots)
	var took, bound []float64
	for i := range opts.Count {
		victim := procs[i%len(procs)]
		c, err := claims(ctx, cs)
		if err != nil {
			return Report{}, err
		}
		var moved []shard.Range
		for _, s := range c[victim.id] {
			moved = append(moved, ranges[s])
		}
		kill := time.Now()
		victim.kill()
		procs = slices.DeleteFunc(procs, func(p *replicaProc) bool { return p == victim })
		done, err := awaitClaims(ctx, cs, ids(), false)
		if err != nil {
			return Report{}, err
		}
		conv := done.Sub(kill)
		set, err := shard.NewSet(shard.UID, moved...)
		if err != nil {
			return Report{}, err
		}
		res, _, err := runShardChild(ctx, ours, Ours, kubeconfig, set, countIn(set))
		if err != nil {
			return Report{}, err
		}
		b := ShardLeaseDuration + time.Duration(res.Millis*float64(time.Millisecond))
		say("kill %d: %s's %d ranges owned elsewhere after %v; bound (Lease %v + one sync of them, %.0f ms) %v",
			i+1, victim.id, len(moved), conv.Round(time.Millisecond), ShardLeaseDuration, res.Millis, b.Round(time.Millisecond))
		took = append(took, conv.Seconds())
		bound = append(bound, b.Seconds())
		if err := start(); err != nil {
			return Report{}, err
		}
		if _, err := awaitClaims(ctx, cs, ids(), true); err != nil {
			return Report{}, err
		}
	}
	if len(took) == 0 {
		return Report{}, errors.New("shard-converge: no run")
	}
	return pairReport("shard-converge", "s", 1, took, bound), nil
}
