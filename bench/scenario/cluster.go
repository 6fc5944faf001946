package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
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
func (c *cluster) podCount(ctx context.Context) (int, error) { return podKind.count(ctx, c.cs) }

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

// sidecarTemplates is how many sidecarPod pods seedStored creates through
// the API: one per app (newPod's i%97), which fixes the container names
// and so the shape of the managedFields.
const sidecarTemplates = 97

// seedChunk is how many pods seedStored writes at a time (between
// progress lines), seedTries how often it tries a chunk, seedWorkers
// how many transactions it keeps in flight: two keep etcd busy on this
// machine, and more only queue up and time out when other work loads it.
const (
	seedChunk   = 10_000
	seedTries   = 6
	seedWorkers = 2
)

// seedStored makes the cluster, a control plane openCluster started, hold
// sidecarPod pods 0..n-1 (seedStoredKind). It returns how many pods the
// cluster holds.
func (c *cluster) seedStored(ctx context.Context, n int, say sayFunc) (int, error) {
	return c.seedStoredKind(ctx, podKind, n, say)
}

// seedStoredKind makes the cluster, a control plane openCluster started,
// hold objects 0..n-1 of kind: the first sidecarTemplates through the API
// (one per app, which fixes the container names and so the shape of the
// managedFields), the rest written straight into etcd
// (testenv.Env.StoreObjects), each a copy of the API-created object of its
// app with object i's identity (kind.stored). It returns how many the
// cluster holds.
func (c *cluster) seedStoredKind(ctx context.Context, kind *millionKind, n int, say sayFunc) (int, error) {
	say = say.orNothing()
	have, err := kind.count(ctx, c.cs)
	if err != nil || have >= n {
		return have, err
	}
	if err := kind.create(ctx, c.cs, min(n, sidecarTemplates)); err != nil {
		return 0, err
	}
	templates := make([]testenv.StoredObject, sidecarTemplates)
	for i := range min(n, sidecarTemplates) {
		if templates[i], err = kind.get(ctx, c.cs, i); err != nil {
			return 0, err
		}
	}
	from := max(have, sidecarTemplates)
	if from < n {
		say("writing %s %d to %d into etcd", kind.name, from, n-1)
		start := time.Now()
		// In chunks, with a progress line every 10 s or so: a million
		// objects take this machine minutes. A chunk that fails is
		// written again (the writes are puts of the same values): a
		// loaded etcd can time a transaction out.
		last := start
		for done := from; done < n; {
			chunk := min(seedChunk, n-done)
			write := func(ctx context.Context) error {
				return c.env.StoreObjects(ctx, kind.res.GVR.Resource, chunk, func(j int) testenv.StoredObject {
					i := done + j
					return kind.stored(templates[i%sidecarTemplates], i)
				}, testenv.BulkOptions{Workers: seedWorkers})
			}
			var err error
			for try := 1; ; try++ {
				if err = write(ctx); err == nil || ctx.Err() != nil || try == seedTries {
					break
				}
				say("writing %s %d to %d failed (%v); trying again", kind.name, done, done+chunk-1, err)
				if err := settle(ctx, 5*time.Second); err != nil {
					return 0, err
				}
			}
			if err != nil {
				return 0, err
			}
			done += chunk
			if now := time.Now(); done < n && now.Sub(last) >= 10*time.Second {
				last = now
				say("%s", progressLine("seeding", int64(done-from), n-from, now.Sub(start), 0))
			}
		}
		took := time.Since(start)
		say("wrote %d %s in %v (%.0f/s)", n-from, kind.name, took.Round(time.Millisecond), float64(n-from)/took.Seconds())
	}
	// The apiserver's watch cache takes a moment to catch up with etcd.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		have, err := kind.count(ctx, c.cs)
		if err != nil || have >= n {
			return have, err
		}
		if time.Now().After(deadline) {
			return have, fmt.Errorf("the apiserver serves %d %s 5 minutes after %d were written", have, kind.name, n)
		}
		if err := settle(ctx, 200*time.Millisecond); err != nil {
			return have, err
		}
	}
}

// sidecarRewriter returns a function that writes pods sidecarTemplates
// to n-1 into etcd again, as seedStored wrote them: the same content at a
// new resource version (etcd's revision of the write). It reads the
// templates now, while the apiserver is up; the function needs only etcd.
func (c *cluster) sidecarRewriter(ctx context.Context, n int) (func(context.Context) error, error) {
	if c.env == nil {
		return nil, errors.New("rewriting pods needs a control plane of its own")
	}
	templates := make([]*corev1.Pod, sidecarTemplates)
	for i := range min(n, sidecarTemplates) {
		want := sidecarPod(i, 0)
		t, err := c.cs.CoreV1().Pods(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		templates[i] = t
	}
	return func(ctx context.Context) error {
		if n <= sidecarTemplates {
			return nil
		}
		return c.env.StoreObjects(ctx, "pods", n-sidecarTemplates, func(j int) testenv.StoredObject {
			i := sidecarTemplates + j
			return storedSidecarPod(templates[i%sidecarTemplates], i)
		}, testenv.BulkOptions{})
	}, nil
}

// seedSidecar makes the cluster hold n sidecarPod pods: written into etcd
// (seedStored) on a control plane of its own, created through the API on
// a kubeconfig's cluster.
func (c *cluster) seedSidecar(ctx context.Context, n int, say sayFunc) (int, error) {
	if c.env != nil {
		return c.seedStored(ctx, n, say)
	}
	return c.seed(ctx, n, sidecarPod, say)
}

// storedSidecarPod is sidecarPod i as the apiserver would have stored it,
// made from t, the API-created pod of the same app.
func storedSidecarPod(t *corev1.Pod, i int) *corev1.Pod {
	want := sidecarPod(i, 0)
	p := t.DeepCopy()
	p.ResourceVersion = ""
	p.Name, p.Namespace, p.GenerateName, p.UID = want.Name, want.Namespace, want.GenerateName, want.UID
	p.Labels, p.Annotations = want.Labels, want.Annotations
	p.OwnerReferences[0].Name = want.OwnerReferences[0].Name
	p.Spec.NodeName = want.Spec.NodeName
	for k := range p.Spec.Containers {
		c, w := &p.Spec.Containers[k], want.Spec.Containers[k]
		c.Image, c.Args = w.Image, w.Args // the proxy's name the namespace
	}
	p.Status = want.Status
	p.Status.HostIPs = []corev1.HostIP{{IP: want.Status.HostIP}}
	ips := strings.NewReplacer(
		`\"`+t.Status.PodIP+`\"`, `\"`+want.Status.PodIP+`\"`,
		`\"`+t.Status.HostIP+`\"`, `\"`+want.Status.HostIP+`\"`)
	for k := range p.ManagedFields {
		if f := p.ManagedFields[k].FieldsV1; f != nil {
			f.Raw = []byte(ips.Replace(string(f.Raw)))
		}
	}
	return p
}
