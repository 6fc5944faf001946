package kubetest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/kube/kubetest"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/workqueue"
)

// labeller is the controller under test: it labels every pod with the
// node it runs on. Its handler queues the pod's name; one worker reads the
// pod from the informer's lister and updates it through a clientset.
type labeller struct {
	pods     informer.Lister[*corev1.Pod]
	queue    *workqueue.Queue[types.NamespacedName]
	client   kubernetes.Interface
	labelled chan<- string // tells the test each pod it labelled
}

func (l *labeller) OnAdd(p *corev1.Pod, _ bool) {
	l.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
}
func (l *labeller) OnUpdate(_, p *corev1.Pod)  { l.OnAdd(p, false) }
func (l *labeller) OnDelete(*corev1.Pod, bool) {}

func (l *labeller) run(ctx context.Context) {
	for {
		key, err := l.queue.Get(ctx)
		if err != nil {
			return // shut down
		}
		if err := l.reconcile(ctx, key); err != nil {
			l.queue.AddRateLimited(key)
		} else {
			l.queue.Forget(key)
		}
		l.queue.Done(key)
	}
}

func (l *labeller) reconcile(ctx context.Context, key types.NamespacedName) error {
	p, err := l.pods.Namespace(key.Namespace).Get(key.Name)
	if errors.Is(err, informer.ErrNotFound) {
		return nil // deleted
	}
	if err != nil || p.Spec.NodeName == "" || p.Labels["node"] == p.Spec.NodeName {
		return err // not scheduled, or labelled already
	}
	p = p.DeepCopy() // cached objects are shared
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels["node"] = p.Spec.NodeName
	if _, err := l.client.CoreV1().Pods(p.Namespace).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	select {
	case l.labelled <- key.String() + " node=" + p.Spec.NodeName:
	case <-ctx.Done():
	}
	return nil
}

// Testing a controller against the fake apiserver: the controller runs on
// a kube.Factory and a clientset, both made from the server's config,
// labels the pods there, and keeps labelling new ones after its watch is
// broken. (In a test, kubetest.New(t, opts) starts the server and closes it
// when the test ends.)
func Example() {
	scheduled := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	srv, err := kubetest.Start(kubetest.Options{Objects: []runtime.Object{scheduled("web-1", "node-a"), scheduled("web-2", "node-b")}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Wire the controller as in production, on the server's config.
	f, err := kube.NewFactory(srv.Config(), kube.FactoryOptions{
		Settings:     reflector.Settings{BackoffInitial: 10 * time.Millisecond}, // fast retries for tests
		ErrorHandler: func(error) {},                                            // the reset below is reported here
	})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Shutdown()
	pods, _, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.Pod]{})
	if err != nil {
		log.Fatal(err)
	}
	labelled := make(chan string)
	c := &labeller{pods: informer.NewLister(pods.Cache()), queue: workqueue.New(workqueue.Options[types.NamespacedName]{}),
		client: kubernetes.NewForConfigOrDie(srv.Config()), labelled: labelled}
	defer c.queue.ShutDown()
	if _, err := pods.AddHandler(c, informer.HandlerOptions{}); err != nil {
		log.Fatal(err)
	}
	f.Start(ctx)
	go c.run(ctx)

	fmt.Println(<-labelled)
	fmt.Println(<-labelled)
	srv.ResetWatches() // the informer watches again, from where it was
	if err := srv.Create(scheduled("web-3", "node-c")); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-labelled)

	updates := 0
	for _, r := range srv.Requests() {
		if r.Verb == "update" && r.Code == 200 {
			updates++
		}
	}
	fmt.Println("updates:", updates) // each pod once: no update of a labelled pod
	// Output:
	// shop/web-1 node=node-a
	// shop/web-2 node=node-b
	// shop/web-3 node=node-c
	// updates: 3
}
