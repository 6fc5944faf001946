package controller_test

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/examples/lbipam/controller"
	"github.com/kinformer/kinformer/testenv"
)

var pool = netip.MustParsePrefix("198.51.100.0/24")

// startController runs a controller until the returned stop is called.
//
// One worker makes the order of reconciles the order of events (the queue
// is FIFO), so which address each Service gets is known.
func startController(t *testing.T, env *testenv.Env) (stop func()) {
	t.Helper()
	c, err := controller.New(controller.Options{
		Config: env.RESTConfig(), Pool: pool, Workers: 1,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func service(name string, typ corev1.ServiceType, class string) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type:  typ,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if class != "" {
		s.Spec.LoadBalancerClass = &class
	}
	return s
}

// waitFor watches the namespace's Services until cond holds for them.
func waitFor(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, what string, cond func(map[string]*corev1.Service) bool) map[string]*corev1.Service {
	t.Helper()
	for {
		list, err := client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		byName := map[string]*corev1.Service{}
		for i := range list.Items {
			byName[list.Items[i].Name] = &list.Items[i]
		}
		if cond(byName) {
			return byName
		}
		w, err := client.CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		select {
		case <-w.ResultChan(): // something changed: look again
		case <-ctx.Done():
			w.Stop()
			t.Fatalf("gave up waiting for %s: %v", what, ctx.Err())
		}
		w.Stop()
	}
}

func address(s *corev1.Service) string {
	if s == nil || len(s.Status.LoadBalancer.Ingress) == 0 {
		return ""
	}
	return s.Status.LoadBalancer.Ingress[0].IP
}

func TestControllerAssignsKeepsAndReleasesAddresses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	env, err := testenv.Start(t.Context(), testenv.Options{Build: testenv.BuildOptions{Progress: os.Stderr}})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	client := env.Clientset()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const ns = "lb"
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	svcs := client.CoreV1().Services(ns)
	create := func(s *corev1.Service) {
		t.Helper()
		if _, err := svcs.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// A Service that already shows an address from the pool, as after a
	// restart of the controller: it must keep it.
	create(service("old", corev1.ServiceTypeLoadBalancer, controller.DefaultClass))
	old, err := svcs.Get(ctx, "old", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.1"}}
	if _, err := svcs.UpdateStatus(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	stop := startController(t, env)
	create(service("a", corev1.ServiceTypeLoadBalancer, controller.DefaultClass))
	create(service("b", corev1.ServiceTypeLoadBalancer, controller.DefaultClass))
	create(service("other-class", corev1.ServiceTypeLoadBalancer, "example.com/other"))
	create(service("cluster-ip", corev1.ServiceTypeClusterIP, ""))

	got := waitFor(ctx, t, client, ns, "a and b to get addresses", func(m map[string]*corev1.Service) bool {
		return address(m["a"]) != "" && address(m["b"]) != ""
	})
	a, b := address(got["a"]), address(got["b"])
	if address(got["old"]) != "198.51.100.1" {
		t.Errorf("old shows %q, want its address 198.51.100.1 kept", address(got["old"]))
	}
	// .0 is the network address, .1 is old's: a and b get .2 and .3.
	if a == b || (a != "198.51.100.2" && a != "198.51.100.3") || (b != "198.51.100.2" && b != "198.51.100.3") {
		t.Errorf("a got %q, b got %q; want .2 and .3, one each", a, b)
	}
	for _, name := range []string{"other-class", "cluster-ip"} {
		if address(got[name]) != "" {
			t.Errorf("%s was given %q; it is not this controller's", name, address(got[name]))
		}
	}

	// Deleting a frees its address for the next Service.
	if err := svcs.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller's informer sees a's deletion before c's creation (one
	// watch, in order), and its single worker reconciles them in that order.
	create(service("c", corev1.ServiceTypeLoadBalancer, controller.DefaultClass))
	got = waitFor(ctx, t, client, ns, "c to get an address", func(m map[string]*corev1.Service) bool { return address(m["c"]) != "" })
	if c := address(got["c"]); c != a {
		t.Errorf("c got %q, want a's freed address %q", c, a)
	}

	// A new controller (a restart) keeps every address where it is.
	stop()
	stop = startController(t, env)
	defer stop()
	create(service("d", corev1.ServiceTypeLoadBalancer, controller.DefaultClass))
	got = waitFor(ctx, t, client, ns, "d to get an address", func(m map[string]*corev1.Service) bool { return address(m["d"]) != "" })
	want := map[string]string{"old": "198.51.100.1", "b": b, "c": a, "d": "198.51.100.4"}
	for name, addr := range want {
		if address(got[name]) != addr {
			t.Errorf("after restart %s shows %q, want %q", name, address(got[name]), addr)
		}
	}
}
