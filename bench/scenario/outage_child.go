package scenario

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	cgcache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// The outage-recovery child (see RunOutage): one side's ten ConfigMap
// informers, one per namespace of ChildNamespacesEnv, behind a
// watchRecorder. It prints outageSynced once all have synced, then reads
// two lines from its standard input: "down NANOS" (the apiserver has
// exited, at Unix nanoseconds NANOS) and "ready NANOS" (it is ready
// again). It waits until the watch of every namespace has been answered
// since the apiserver went down, and at least a second after readiness,
// prints an OutageResult and exits.

// ChildNamespacesEnv is the comma-separated namespaces of an outage child.
const ChildNamespacesEnv = "KINFORMER_BENCH_CHILD_NAMESPACES"

// Lines of the outage protocol: outageSynced from the child (standard
// output), outageDown and outageReady with a time from the parent
// (standard input).
const (
	outageSynced = "synced"
	outageDown   = "down"
	outageReady  = "ready"
)

// outageBackTimeout bounds a child's wait, after readiness, for every
// informer to watch again: client-go's reflectors wait at most twice their
// 30 s back-off cap (jitter 1.0) between tries.
const outageBackTimeout = 3 * time.Minute

// OutageResult is what an outage child reports.
type OutageResult struct {
	// RecoverySeconds runs from the apiserver's readiness (StartAPIServer
	// returned: /readyz said ok) to the moment the last namespace's watch
	// was answered 200 after the outage. Negative: the last came back
	// before /readyz said ready (the apiserver serves requests while its
	// last readiness checks finish).
	RecoverySeconds float64 `json:"recoverySeconds"`
	// FirstSeconds is the same for the first namespace back.
	FirstSeconds float64 `json:"firstSeconds"`
	// CPUSeconds is the child's CPU time (user + system, rusage) from the
	// outage's start (the down line) until the last informer watched
	// again, or until the ready line when that came later: the probing
	// and retries during the outage and the reconnection.
	CPUSeconds float64 `json:"cpuSeconds"`
	// FirstSecondRequests counts the requests the child sent in the first
	// second after readiness.
	FirstSecondRequests int `json:"firstSecondRequests"`
	// SuccessSecondRequests counts the requests it sent in the first
	// second after one of them first succeeded (2xx) since the outage:
	// the burst a client sends when it finds the server back, which
	// FirstSecondRequests misses when the informers are back before
	// readiness (the apiserver serves requests a second or so before its
	// /readyz says ok).
	SuccessSecondRequests int `json:"successSecondRequests"`
	// OutageRequests counts the requests it sent from the outage's start
	// until the last informer watched again.
	OutageRequests int `json:"outageRequests"`
	// Objects is how many ConfigMaps the informers cache once all are back.
	Objects int `json:"objects"`
	// Errors counts the errors the informers reported (failed watches and
	// lists) over the whole run.
	Errors int64 `json:"errors"`
}

// isOutageSide reports the sides outageChild runs.
func isOutageSide(s Side) bool { return s == OutageOurs || s == OutageClientGo }

// outageInformers is one side's informers as the child drives them.
type outageInformers struct {
	// synced waits until every informer has synced; false if ctx ended.
	synced func(ctx context.Context) bool
	// objects counts the cached objects of all informers.
	objects func() int
	// stop stops every informer and waits for them.
	stop func()
}

// outageChild is an outage-recovery child: see the comment above
// ChildNamespacesEnv.
func outageChild(ctx context.Context, side Side, in io.Reader, out io.Writer) error {
	namespaces := strings.Split(os.Getenv(ChildNamespacesEnv), ",")
	kubeconfig := os.Getenv(ChildKubeconfigEnv)
	say := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "controlplane: outage child %s: "+format+"\n", append([]any{side}, args...)...)
	}
	rec := newWatchRecorder()
	var errs atomic.Int64
	onErr := func(error) { errs.Add(1) }
	var (
		infs outageInformers
		err  error
	)
	switch side {
	case OutageOurs:
		infs, err = ourOutageInformers(ctx, kubeconfig, namespaces, rec, onErr)
	case OutageClientGo:
		infs, err = clientGoOutageInformers(ctx, kubeconfig, namespaces, rec, onErr)
	default:
		err = fmt.Errorf("unknown side %q", side)
	}
	if err != nil {
		return err
	}
	defer infs.stop()
	if !infs.synced(ctx) {
		return fmt.Errorf("informers not synced: %w", ctx.Err())
	}
	if _, err := fmt.Fprintln(out, outageSynced); err != nil {
		return err
	}

	lines := bufio.NewScanner(in)
	down, err := readOutageLine(lines, outageDown)
	if err != nil {
		return err
	}
	cpuDown := processCPU()
	ready, err := readOutageLine(lines, outageReady)
	if err != nil {
		return err
	}

	deadline := time.NewTimer(time.Until(ready.Add(outageBackTimeout)))
	defer deadline.Stop()
	var back map[string]time.Time
	for reported := -1; ; {
		back = rec.backSince(down, namespaces)
		if len(back) != reported {
			reported = len(back)
			say("%d of %d informers watching again, %.2f s after readiness", len(back), len(namespaces), time.Since(ready).Seconds())
		}
		if len(back) == len(namespaces) {
			break
		}
		select {
		case <-rec.changed:
		case <-deadline.C:
			return fmt.Errorf("not watching again %v after readiness: %v", outageBackTimeout, missing(namespaces, back))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	cpu := processCPU() - cpuDown
	first, last := recoveryTimes(ready, back)
	lastAt := ready.Add(last)

	// A request has succeeded (the watches at least); the first second
	// after that, and after readiness, must be over to be counted.
	success, ok := rec.firstSuccess(down)
	if !ok {
		return errors.New("watching again, but no success recorded")
	}
	select {
	case <-time.After(time.Until(later(ready, success).Add(time.Second))):
	case <-ctx.Done():
		return ctx.Err()
	}
	res := OutageResult{
		RecoverySeconds:       last.Seconds(),
		FirstSeconds:          first.Seconds(),
		CPUSeconds:            cpu.Seconds(),
		FirstSecondRequests:   rec.requests(ready, ready.Add(time.Second)),
		SuccessSecondRequests: rec.requests(success, success.Add(time.Second)),
		OutageRequests:        rec.requests(down, lastAt),
		Objects:               infs.objects(),
		Errors:                errs.Load(),
	}
	return json.NewEncoder(out).Encode(res)
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// missing returns the namespaces not in back.
func missing(namespaces []string, back map[string]time.Time) []string {
	var out []string
	for _, ns := range namespaces {
		if _, ok := back[ns]; !ok {
			out = append(out, ns)
		}
	}
	return out
}

// readOutageLine reads the next line of the parent, which must be kind
// with a time.
func readOutageLine(lines *bufio.Scanner, kind string) (time.Time, error) {
	if !lines.Scan() {
		err := lines.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return time.Time{}, fmt.Errorf("waiting for %q from the parent: %w", kind, err)
	}
	got, at, err := parseOutageLine(lines.Text())
	if err == nil && got != kind {
		err = fmt.Errorf("got %q from the parent, want %q", lines.Text(), kind)
	}
	return at, err
}

// parseOutageLine parses "KIND NANOS", a parent's line to an outage child.
func parseOutageLine(line string) (kind string, at time.Time, err error) {
	f := strings.Fields(line)
	if len(f) != 2 || !slices.Contains([]string{outageDown, outageReady}, f[0]) {
		return "", time.Time{}, fmt.Errorf("outage line %q: want %q or %q and Unix nanoseconds", line, outageDown, outageReady)
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || n <= 0 {
		return "", time.Time{}, fmt.Errorf("outage line %q: bad time", line)
	}
	return f[0], time.Unix(0, n), nil
}

// formatOutageLine is the parent's line kind at t.
func formatOutageLine(kind string, t time.Time) string {
	return kind + " " + strconv.FormatInt(t.UnixNano(), 10) + "\n"
}

// ourOutageInformers is kinformer's side: one kube.Factory (which shares a
// reflector.Server, and its /readyz probe, among its informers) with a
// typed ConfigMap informer per namespace, default options.
func ourOutageInformers(ctx context.Context, kubeconfig string, namespaces []string, rec *watchRecorder, onErr func(error)) (outageInformers, error) {
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return outageInformers{}, err
	}
	cfg.Wrap(rec.wrap)
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{ErrorHandler: onErr})
	if err != nil {
		return outageInformers{}, err
	}
	infs := make([]*informer.Shared[*corev1.ConfigMap], 0, len(namespaces))
	for _, ns := range namespaces {
		inf, _, err := kube.Informer(ctx, f, kube.InformerOptions[*corev1.ConfigMap]{Selection: kube.Selection{Namespace: ns}})
		if err != nil {
			f.Shutdown()
			return outageInformers{}, err
		}
		infs = append(infs, inf)
	}
	f.Start(ctx)
	return outageInformers{
		synced: func(ctx context.Context) bool {
			for _, ok := range f.WaitForCacheSync(ctx) {
				if !ok {
					return false
				}
			}
			return true
		},
		objects: func() int {
			n := 0
			for _, inf := range infs {
				n += len(inf.Cache().List())
			}
			return n
		},
		stop: f.Shutdown,
	}, nil
}

// clientGoOutageInformers is client-go's side: one clientset (protobuf,
// as scenario 7's) shared by ten SharedInformerFactory, one per namespace
// (informers.WithNamespace), each with its ConfigMap informer: a factory
// holds one informer per type, so ten namespaces take ten factories. Their
// default options otherwise, so each reflector backs off on its own (800
// ms doubling to 30 s, jitter 1.0).
func clientGoOutageInformers(ctx context.Context, kubeconfig string, namespaces []string, rec *watchRecorder, onErr func(error)) (outageInformers, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return outageInformers{}, err
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.Wrap(rec.wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return outageInformers{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	factories := make([]informers.SharedInformerFactory, 0, len(namespaces))
	infs := make([]cgcache.SharedIndexInformer, 0, len(namespaces))
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
		inf := f.Core().V1().ConfigMaps().Informer()
		// Counted instead of logged (the default handler logs every
		// failed try); the back-off is the same either way.
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cgcache.Reflector, err error) { onErr(err) }); err != nil {
			cancel()
			return outageInformers{}, err
		}
		factories = append(factories, f)
		infs = append(infs, inf)
	}
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	return outageInformers{
		synced: func(wait context.Context) bool {
			for _, f := range factories {
				for _, ok := range f.WaitForCacheSync(wait.Done()) {
					if !ok {
						return false
					}
				}
			}
			return true
		},
		objects: func() int {
			n := 0
			for _, inf := range infs {
				n += len(inf.GetStore().ListKeys())
			}
			return n
		},
		stop: func() {
			cancel()
			for _, f := range factories {
				f.Shutdown()
			}
		},
	}, nil
}
