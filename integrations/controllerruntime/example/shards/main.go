// Command shards runs three replicas of one controller-runtime controller,
// each a process of its own with a manager whose cache shards config maps
// (controllerruntime.Options.Shards): each replica caches and reconciles
// only its share, and the shares are agreed through Leases. The controller
// stamps every config map it reconciles with its replica's name
// (annotation example.kinformer.dev/reconciled-by). Then one replica is
// killed (SIGKILL: no goodbye), and the two others take its share over once
// its Lease has gone silent, restamping its config maps.
//
//	cd integrations/controllerruntime && go run ./example/shards [-objects 300] [-lease 6s]
//
// It starts testenv's etcd and kube-apiserver (built and cached on first
// use) with the ShardedListAndWatch feature gate on, so the apiserver
// sends each range's watch only its own objects, and stops them at the
// end. The replicas are this same program, started again with
// KINFORMER_SHARDS_REPLICA set; run against another cluster, start it
// three times with that variable (m0, m1, m2) and KUBECONFIG set.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kinformer/kinformer/testenv"
)

// Environment of a replica process.
const (
	replicaEnv = "KINFORMER_SHARDS_REPLICA" // its identity
	leaseEnv   = "KINFORMER_SHARDS_LEASE"   // its Lease duration
)

func main() {
	objects := flag.Int("objects", 300, "config maps to create and reconcile")
	lease := flag.Duration("lease", 6*time.Second, "Lease duration of the replicas")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if id := os.Getenv(replicaEnv); id != "" {
		err = replica(ctx, id)
	} else {
		self, serr := os.Executable()
		if serr != nil {
			err = serr
		} else {
			_, err = run(ctx, Options{Objects: *objects, Lease: *lease, Self: self, Out: os.Stdout})
		}
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "shards:", err)
		os.Exit(1)
	}
}

// Options configure run.
type Options struct {
	Objects int
	Lease   time.Duration
	// Self is the program the replicas run (this one); Args its arguments.
	Self string
	Args []string
	Out  io.Writer
}

// Result is what run saw: config maps by the replica that stamped them,
// with all three running and after the kill of m2, and how long after the
// kill the survivors had stamped all of m2's.
type Result struct {
	Shared, AfterKill map[string]int
	Takeover          time.Duration
}

func run(ctx context.Context, o Options) (Result, error) {
	ctrl.SetLogger(logr.Discard())
	fmt.Fprintln(o.Out, "starting etcd and kube-apiserver (testenv), ShardedListAndWatch on")
	env, err := testenv.Start(ctx, testenv.Options{
		Build:        testenv.BuildOptions{Progress: os.Stderr},
		FeatureGates: map[string]bool{"ShardedListAndWatch": true},
	})
	if err != nil {
		return Result{}, err
	}
	defer env.Stop()
	cs, err := kubernetes.NewForConfig(env.RESTConfig())
	if err != nil {
		return Result{}, err
	}
	if err := env.CreateNamespace(ctx, namespace); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(o.Out, "creating %d config maps\n", o.Objects)
	for i := range o.Objects {
		_, err := cs.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("cm-%04d", i), Labels: map[string]string{label: "yes"}}}, metav1.CreateOptions{})
		if err != nil {
			return Result{}, err
		}
	}

	procs := map[string]*exec.Cmd{}
	defer func() { // the survivors leave gracefully: SIGTERM, then wait
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			_ = p.Wait()
		}
	}()
	for _, id := range []string{"m0", "m1", "m2"} {
		cmd := exec.Command(o.Self, o.Args...)
		cmd.Env = append(os.Environ(), replicaEnv+"="+id, leaseEnv+"="+o.Lease.String(), "KUBECONFIG="+env.KubeconfigPath())
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return Result{}, err
		}
		procs[id] = cmd
	}
	fmt.Fprintln(o.Out, "started replicas m0, m1 and m2")

	var res Result
	res.Shared, err = await(ctx, cs, func(by map[string]int) bool { return len(by) == 3 && by[""] == 0 })
	if err != nil {
		return res, err
	}
	fmt.Fprintf(o.Out, "stamped by: %s\n", describe(res.Shared))

	if err := procs["m2"].Process.Kill(); err != nil {
		return res, err
	}
	killed := time.Now()
	_ = procs["m2"].Wait()
	delete(procs, "m2")
	fmt.Fprintf(o.Out, "killed m2 (SIGKILL); its Lease lasts %v\n", o.Lease)
	res.AfterKill, err = await(ctx, cs, func(by map[string]int) bool { return by["m2"] == 0 && by[""] == 0 })
	if err != nil {
		return res, err
	}
	res.Takeover = time.Since(killed)
	fmt.Fprintf(o.Out, "%v after the kill, stamped by: %s\n", res.Takeover.Round(100*time.Millisecond), describe(res.AfterKill))
	return res, nil
}

// await polls the config maps' stamps until done holds for their count by
// replica ("" for none), and returns that count; it gives up after two
// minutes.
func await(ctx context.Context, cs kubernetes.Interface, done func(map[string]int) bool) (map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		list, err := cs.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{LabelSelector: label + "=yes"})
		if err != nil {
			return nil, err
		}
		by := map[string]int{}
		for _, cm := range list.Items {
			by[cm.Annotations[stamp]]++
		}
		if done(by) {
			return by, nil
		}
		select {
		case <-ctx.Done():
			return by, errors.New("gave up waiting for the stamps: " + describe(by))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func describe(by map[string]int) string {
	s := ""
	for _, id := range slices.Sorted(maps.Keys(by)) {
		name := id
		if name == "" {
			name = "(none)"
		}
		s += fmt.Sprintf(" %s %d", name, by[id])
	}
	return s
}
