package scenario

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	cgcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
)

// Scenarios pod-memory and pod-memory-shared: bytes per cached pod, as
// decoded by each side's real source.
//
// One in-process HTTP server answers like a kube-apiserver: a list of
// 20,000 pods in protobuf (newPod's pods with the managedFields the
// apiserver adds), and watches that stay open without events (a streaming
// list is refused, so both sides list plainly). kinformer syncs them
// through kube.Source and a shared informer, client-go through a protobuf
// clientset and its shared informer. The value is the live heap after the
// sync (after garbage collection) minus the live heap before the informer
// was built, divided by the pods: the pods as each side decoded and keeps
// them, its cache and indexes, and kinformer's interning tables.
//
// pod-memory runs kube.Source with its default options (strings interned);
// pod-memory-shared with SourceOptions.ShareMutableParts. The client-go
// side is the same in both.
func init() {
	for _, shared := range []bool{false, true} {
		s := Scenario{
			Name:   "pod-memory",
			Unit:   "B/pod",
			Target: Target{Op: AtMost, Value: 0.95},
			Run: func(ctx context.Context, side Side, size Size) (Result, error) {
				return runPodMemory(ctx, side, size, shared)
			},
		}
		if shared {
			s.Name, s.Target = "pod-memory-shared", Target{Op: AtMost, Value: 0.5}
		}
		Register(s)
	}
}

func podMemoryPods(size Size) int {
	if size == Small {
		return 300
	}
	return 20_000
}

// servedPod is newPod as a kube-apiserver returns it: with the
// managedFields of the controller that created it (the same for all pods
// of an app) and of the kubelet (naming the pod's IP, so unique).
func servedPod(i int) *corev1.Pod {
	p := newPod(i, int64(i+1))
	app := p.Labels["app"]
	created, updated := podEpoch, metav1.Unix(podEpoch.Unix()+int64(i), 0)
	p.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &created, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(
				`{"f:metadata":{"f:annotations":{".":{},"f:checksum/config":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}},` +
					`"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{},` +
					`"f:pod-template-hash":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"` + string(p.OwnerReferences[0].UID) + `\"}":{}}},` +
					`"f:spec":{"f:containers":{"k:{\"name\":\"` + app + `\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"APP_NAME\"}":{".":{},"f:name":{},"f:value":{}},` +
					`"k:{\"name\":\"POD_NAMESPACE\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},` +
					`"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}},` +
					`"k:{\"containerPort\":9090,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},` +
					`"f:readinessProbe":{".":{},"f:failureThreshold":{},"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},` +
					`"f:successThreshold":{},"f:timeoutSeconds":{}},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},` +
					`"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},` +
					`"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/etc/app\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}}}}},` +
					`"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:terminationGracePeriodSeconds":{},` +
					`"f:tolerations":{},"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},"f:configMap":{".":{},"f:name":{}},"f:name":{}}}}}`)}},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &updated,
			Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(
				`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},` +
					`"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},` +
					`"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},` +
					`"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},` +
					`"f:podIPs":{".":{},"k:{\"ip\":\"` + p.Status.PodIP + `\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)}},
	}
	return p
}

// podListProtobuf returns the protobuf body of a list of n served pods, as
// the apiserver sends it.
func podListProtobuf(n int) ([]byte, error) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(n)}, Items: make([]corev1.Pod, n)}
	for i := range n {
		list.Items[i] = *servedPod(i)
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return nil, errors.New("no protobuf serializer")
	}
	return runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), list)
}

// podServer serves body to every list of pods; a watch stays open, with no
// events, until the client goes (a streaming list is refused, as by an
// apiserver without the feature).
func podServer(body []byte) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/pods" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		switch {
		case q.Get("watch") != "true":
			w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
			_, _ = w.Write(body)
		case q.Get("sendInitialEvents") == "true":
			w.Header().Set("Content-Type", runtime.ContentTypeJSON)
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,` +
				`"message":"sendInitialEvents is not supported by this server"}`))
		default:
			w.Header().Set("Content-Type", runtime.ContentTypeProtobuf+";stream=watch")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
}

func runPodMemory(ctx context.Context, side Side, size Size, shared bool) (Result, error) {
	n := podMemoryPods(size)
	var err error
	body := cachedFixture("pod-memory/"+strconv.Itoa(n), func() []byte {
		var b []byte
		b, err = podListProtobuf(n)
		return b
	})
	if err != nil {
		dropFixture()
		return Result{}, err
	}
	srv := podServer(body)
	defer srv.Close()
	// One client per run, its idle connections closed at the end, so no
	// connection outlives the run.
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	cfg := &rest.Config{Host: srv.URL, QPS: -1}

	base := heapAfterGC()
	p := newProgress(n, 0)
	var (
		run    func(ctx context.Context) error
		cached func() []*corev1.Pod
		// mu guards errs, what kinformer's informer reported.
		mu   sync.Mutex
		errs []error
	)
	switch side {
	case Ours:
		src, err := kube.Source[*corev1.Pod](ctx, cfg, kube.SourceOptions{HTTPClient: client, ShareMutableParts: shared})
		if err != nil {
			return Result{}, err
		}
		inf, err := informer.NewShared(informer.Options[*corev1.Pod]{
			Source:   src,
			Indexers: cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc[*corev1.Pod]},
			ErrorHandler: func(err error) {
				if errors.Is(err, listwatch.ErrStreamingListUnsupported) {
					return // the server's answer to a streaming list; expected
				}
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, err)
			},
		})
		if err != nil {
			return Result{}, err
		}
		if _, err := inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{
			AddFunc: func(pod *corev1.Pod, _ bool) { p.saw(pod) },
		}, informer.HandlerOptions{}); err != nil {
			return Result{}, err
		}
		run = inf.Run
		cached = func() []*corev1.Pod { return inf.Cache().List() }
	case ClientGo:
		cfg.ContentType = runtime.ContentTypeProtobuf
		cs, err := kubernetes.NewForConfigAndClient(cfg, client)
		if err != nil {
			return Result{}, err
		}
		pods := cs.CoreV1().Pods(metav1.NamespaceAll)
		inf := cgcache.NewSharedIndexInformer(clientGoSource{&cgcache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				return pods.List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				return pods.Watch(ctx, opts)
			},
		}}, &corev1.Pod{}, 0, cgcache.Indexers{cgcache.NamespaceIndex: cgcache.MetaNamespaceIndexFunc})
		if _, err := inf.AddEventHandler(cgcache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { p.saw(obj.(*corev1.Pod)) },
		}); err != nil {
			return Result{}, err
		}
		run = func(ctx context.Context) error { inf.RunWithContext(ctx); return nil }
		cached = func() []*corev1.Pod {
			objs := inf.GetIndexer().List()
			out := make([]*corev1.Pod, len(objs))
			for i, o := range objs {
				out[i] = o.(*corev1.Pod)
			}
			return out
		}
	default:
		return Result{}, fmt.Errorf("unknown side %q", side)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(runCtx) }()
	werr := waitAll(ctx, 5*time.Minute, "sync", p)
	held := heapAfterGC() - base
	pods := cached()
	digest := cacheDigest(pods)
	if err := checkShared(pods, side == Ours && shared); werr == nil {
		werr = err
	}
	pods = nil
	cancel()
	werr = errors.Join(werr, <-done)
	mu.Lock()
	werr = errors.Join(append([]error{werr}, errs...)...)
	mu.Unlock()
	if werr != nil {
		return Result{}, werr
	}
	return Result{Value: float64(held) / float64(n), Digest: digest}, nil
}

// checkShared checks that two pods of one app share their containers
// exactly when they should: the figure of pod-memory-shared means nothing
// if the option did not reach the decoder, nor pod-memory's if it did.
func checkShared(pods []*corev1.Pod, want bool) error {
	byApp := map[string]*corev1.Pod{}
	for _, p := range pods {
		key := p.Spec.Containers[0].Image
		other, ok := byApp[key]
		if !ok {
			byApp[key] = p
			continue
		}
		if got := &other.Spec.Containers[0] == &p.Spec.Containers[0]; got != want {
			return fmt.Errorf("%w: pods %s and %s share their containers: %v, want %v", ErrMismatch, other.Name, p.Name, got, want)
		}
		return nil
	}
	return nil
}
