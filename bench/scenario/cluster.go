package scenario

import (
	"context"
	"encoding/json"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kinformer/kinformer/testenv"
)

// cluster is the control plane a control-plane scenario runs against: one
// it started (env set) or a running one named by a kubeconfig.
type cluster struct {
	kubeconfig string
	cs         kubernetes.Interface
	env        *testenv.Env // nil for a kubeconfig's cluster
}

// openCluster connects to the cluster of kubeconfig or, when it is empty,
// starts a control plane with opts (building it on first use). Call stop
// when done.
func openCluster(ctx context.Context, kubeconfig string, opts testenv.Options, say sayFunc) (*cluster, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, err
		}
		cfg.QPS, cfg.Burst = -1, 0
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		return &cluster{kubeconfig: kubeconfig, cs: cs}, nil
	}
	say.orNothing()("starting the control plane (the first start builds it, which takes many minutes)")
	if opts.Build.Progress == nil {
		opts.Build.Progress = os.Stderr
	}
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &cluster{kubeconfig: env.KubeconfigPath(), cs: env.Clientset(), env: env}, nil
}

// stop stops the control plane openCluster started, if it did.
func (c *cluster) stop() {
	if c.env != nil {
		c.env.Stop()
	}
}

// podCount returns how many pods the cluster holds.
func (c *cluster) podCount(ctx context.Context) (int, error) {
	list, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	have := len(list.Items)
	if list.RemainingItemCount != nil {
		have += int(*list.RemainingItemCount)
	}
	return have, nil
}

// seed creates pods 0..n-1 of pod through the API (createPods) unless
// the cluster already holds n pods, and returns how many it holds.
func (c *cluster) seed(ctx context.Context, n int, pod func(int, int64) *corev1.Pod, say sayFunc) (int, error) {
	have, err := c.podCount(ctx)
	if err != nil || have >= n {
		return have, err
	}
	say = say.orNothing()
	say("creating %d pods", n)
	start := time.Now()
	if err := createPods(ctx, c.cs, n, pod); err != nil {
		return 0, err
	}
	took := time.Since(start)
	say("created %d pods in %v (%.0f pods/s)", n, took.Round(time.Second), float64(n-have)/took.Seconds())
	return c.podCount(ctx)
}

// podJSONSize returns the size of the JSON of one pod as the server holds
// it (the first of a list), managedFields included, and without them.
func (c *cluster) podJSONSize(ctx context.Context) (full, withoutMF int, err error) {
	list, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(list.Items) == 0 {
		return 0, 0, err
	}
	p := &list.Items[0]
	raw, err := c.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces", p.Namespace, "pods", p.Name).
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return 0, 0, err
	}
	var pod corev1.Pod
	if err := json.Unmarshal(raw, &pod); err != nil {
		return 0, 0, err
	}
	pod.ManagedFields = nil
	stripped, err := json.Marshal(&pod)
	return len(raw), len(stripped), err
}
