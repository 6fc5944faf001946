package scenario

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kinformer/kinformer/testenv"
)

// Scenario outage-recovery (issue 22, section 3): how soon after a
// kube-apiserver outage every informer of a process watches again.
//
// One control plane serves every run; 10 namespaces hold 3 ConfigMaps
// each. Each run starts two child processes at once: kinformer (one
// kube.Factory, a typed ConfigMap informer per namespace; the factory's
// informers share a reflector.Server, which probes /readyz every 500 ms
// during an outage and wakes every informer in back-off within a 1 s
// jittered spread) and client-go (one clientset, a SharedInformerFactory
// per namespace with its ConfigMap informer; each reflector backs off on
// its own, up to 30 s with jitter 1.0). Once both have synced, the parent
// stops the apiserver, waits Outage (60 s by default: both sides' back-off
// has reached its 30 s cap by then), starts it again (StartAPIServer
// returns once /readyz is ok: readiness) and tells both children when it
// went down and when it was ready. Both sides share the same outage, so
// there is nothing to alternate.
//
// Each child wraps its transport (rest.Config.Wrap, the same
// watchRecorder on both sides) and takes "watching again" to be a watch
// request (watch=true) of the namespace answered 200 after the apiserver
// went down. It reports the last namespace's time minus readiness, its CPU
// time from the outage's start until then, and the requests it sent in
// the first second after readiness (see OutageResult). Lines:
//
//   - outage-recovery: ours= and clientgo= the seconds from readiness to
//     the last of 10 informers watching again (medians; negative: before
//     /readyz said ready), target <= 0.2. The ratio counts a negative
//     ours= as 0 (it came back no later than readiness) and a client-go
//     median under 1 ms as 1 ms.
//   - outage-first-second-requests: the requests each side sent in the
//     first second after readiness, no target (see outageReports).

// Sides of the outage-recovery scenario.
const (
	OutageOurs     Side = "outage-ours"
	OutageClientGo Side = "outage-clientgo"
)

// The outage scenario's data and bounds.
const (
	// DefaultOutageLength is OutageOptions.Outage's default.
	DefaultOutageLength = 60 * time.Second
	outageNamespaces    = 10
	outageConfigMaps    = 3 // per namespace
	outageTarget        = 0.2
	// outageSyncTimeout bounds the wait for both children to sync.
	outageSyncTimeout = 2 * time.Minute
	// outageTick is how often the parent says it is still waiting.
	outageTick = 10 * time.Second
)

// OutageOptions configures RunOutage.
type OutageOptions struct {
	// Count of runs, each measuring both sides. Default 3.
	Count int
	// Outage is how long the apiserver stays down. Default
	// DefaultOutageLength.
	Outage time.Duration
	// Settle is the pause before each run (see ControlPlaneOptions.Settle).
	Settle time.Duration
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)
}

// RunOutage measures the outage-recovery scenario on a control plane of
// its own and returns its two reports.
func RunOutage(ctx context.Context, opts OutageOptions) ([]Report, error) {
	if opts.Count <= 0 {
		opts.Count = 3
	}
	if opts.Outage <= 0 {
		opts.Outage = DefaultOutageLength
	}
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	say := sayFunc(opts.Progress).orNothing()
	say("starting the control plane (the first start builds it, which takes many minutes)")
	env, err := testenv.Start(ctx, testenv.Options{Build: testenv.BuildOptions{Progress: os.Stderr}})
	if err != nil {
		return nil, err
	}
	defer env.Stop()
	namespaces := make([]string, outageNamespaces)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("outage-%d", i)
		if err := env.CreateNamespace(ctx, namespaces[i]); err != nil {
			return nil, err
		}
		if err := env.CreateConfigMaps(ctx, namespaces[i], outageConfigMaps, testenv.BulkOptions{}); err != nil {
			return nil, err
		}
	}
	say("created %d namespaces of %d ConfigMaps; %d runs of a %v outage follow, about %v each",
		outageNamespaces, outageConfigMaps, opts.Count, opts.Outage, (opts.Outage + 45*time.Second).Round(time.Second))
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	runs := map[Side][]OutageResult{}
	for i := range opts.Count {
		if err := settle(ctx, opts.Settle); err != nil {
			return nil, err
		}
		res, err := outageRun(ctx, env, self, namespaces, opts.Outage, i+1, say)
		if err != nil {
			return nil, fmt.Errorf("outage-recovery (run %d): %w", i+1, err)
		}
		for _, side := range []Side{OutageOurs, OutageClientGo} {
			r := res[side]
			if want := outageNamespaces * outageConfigMaps; r.Objects != want {
				return nil, fmt.Errorf("outage-recovery (%s, run %d): %w: %d ConfigMaps cached, want %d", side, i+1, ErrMismatch, r.Objects, want)
			}
			say("run %d %-15s last informer watching again %+7.2f s after readiness (first %+.2f s), CPU %.3f s, requests: %d in the first second after readiness, %d in the first after its first success, %d since the outage began; %d errors reported to the handler",
				i+1, side, r.RecoverySeconds, r.FirstSeconds, r.CPUSeconds, r.FirstSecondRequests, r.SuccessSecondRequests, r.OutageRequests, r.Errors)
			runs[side] = append(runs[side], r)
		}
	}
	return outageReports(runs[OutageOurs], runs[OutageClientGo]), nil
}

// outageProc is one child of an outage run, as the parent sees it.
type outageProc struct {
	side Side
	// stdin is the write end of the child's standard input; outageRun
	// closes it when the run ends.
	stdin *os.File
	// synced is closed when the child printed outageSynced.
	synced chan struct{}
	// done is closed when the child has exited; res and err are set
	// before.
	done chan struct{}
	res  OutageResult
	err  error
}

// startOutageProc starts side's child; it runs until it exits or ctx ends.
// The goroutine it starts ends when the child has exited (closing done).
func startOutageProc(ctx context.Context, self string, side Side, kubeconfig string, namespaces []string) (*outageProc, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &outageProc{side: side, stdin: w, synced: make(chan struct{}), done: make(chan struct{})}
	onLine := func(line string) error {
		select {
		case <-p.synced:
		default:
			if line == outageSynced {
				close(p.synced)
				return nil
			}
		}
		return fmt.Errorf("unexpected line %q from the %s child", line, side)
	}
	go func() {
		defer close(p.done)
		defer r.Close() // the child has its own copy
		p.res, _, p.err = runChildJSON[OutageResult](ctx, childRun{args: []string{self}, stdin: r, onLine: onLine, env: childEnv(
			ChildSideEnv, string(side),
			ChildKubeconfigEnv, kubeconfig,
			ChildNamespacesEnv, strings.Join(namespaces, ","))})
		if p.err != nil {
			p.err = fmt.Errorf("%s child: %w", side, p.err)
		}
	}()
	return p, nil
}

// outageRun runs both children through one outage and returns their
// results by side.
func outageRun(ctx context.Context, env *testenv.Env, self string, namespaces []string, outage time.Duration, run int, say sayFunc) (map[Side]OutageResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	var procs []*outageProc
	defer func() {
		cancel() // kills a child still running
		for _, p := range procs {
			p.stdin.Close()
			<-p.done
		}
	}()
	for _, side := range []Side{OutageOurs, OutageClientGo} {
		p, err := startOutageProc(ctx, self, side, env.KubeconfigPath(), namespaces)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	say("run %d: both children started, waiting for their %d informers each to sync", run, len(namespaces))
	syncTimeout := time.NewTimer(outageSyncTimeout)
	defer syncTimeout.Stop()
	for _, p := range procs {
		select {
		case <-p.synced:
		case <-p.done:
			return nil, fmt.Errorf("%s child exited before it synced: %w", p.side, p.err)
		case <-syncTimeout.C:
			return nil, fmt.Errorf("%s child not synced after %v", p.side, outageSyncTimeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}

	say("run %d: both synced; stopping the apiserver for %v", run, outage)
	if err := env.StopAPIServer(ctx); err != nil {
		return nil, err
	}
	down := time.Now()
	if err := tellOutage(procs, outageDown, down); err != nil {
		return nil, err
	}
	tick := time.NewTicker(outageTick)
	defer tick.Stop()
	end := time.NewTimer(outage)
	defer end.Stop()
	for waiting := true; waiting; {
		select {
		case <-end.C:
			waiting = false
		case <-tick.C:
			say("run %d: apiserver down for %v of %v", run, time.Since(down).Round(time.Second), outage)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	say("run %d: starting the apiserver", run)
	starting := time.Now()
	if err := env.StartAPIServer(ctx); err != nil {
		return nil, err
	}
	ready := time.Now()
	if err := tellOutage(procs, outageReady, ready); err != nil {
		return nil, err
	}
	say("run %d: apiserver ready (%v after the start); waiting for every informer of both children to watch again",
		run, ready.Sub(starting).Round(time.Millisecond))

	out := map[Side]OutageResult{}
	for _, p := range procs {
		for waiting := true; waiting; {
			select {
			case <-p.done:
				waiting = false
			case <-tick.C:
				say("run %d: %v since readiness, the %s child is still waiting for its informers", run, time.Since(ready).Round(time.Second), p.side)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if p.err != nil {
			return nil, p.err
		}
		out[p.side] = p.res
	}
	return out, nil
}

// tellOutage writes the line kind at t to every child.
func tellOutage(procs []*outageProc, kind string, t time.Time) error {
	line := formatOutageLine(kind, t)
	for _, p := range procs {
		if _, err := p.stdin.WriteString(line); err != nil {
			return fmt.Errorf("telling the %s child %q: %w", p.side, kind, err)
		}
	}
	return nil
}

// outageReports makes the two lines of the scenario from each side's runs
// (neither empty).
//
// outage-first-second-requests has no target: a ratio target would reward
// the slow side, since client-go sends few requests in that second
// precisely because its reflectors are still waiting out their back-off.
// The bound that matters is absolute: about one request per informer plus
// the probe, not a stampede (the e2e test TestEveryInformerIsBackSoonAfterAnOutage
// asserts at most 10 + 5). Its ratio divides by at least 1 request.
func outageReports(ours, clientGo []OutageResult) []Report {
	values := func(runs []OutageResult, f func(OutageResult) float64) []float64 {
		out := make([]float64, len(runs))
		for i, r := range runs {
			out[i] = f(r)
		}
		return out
	}
	recovery := func(r OutageResult) float64 { return r.RecoverySeconds }
	first := func(r OutageResult) float64 { return r.FirstSeconds }
	cpu := func(r OutageResult) float64 { return r.CPUSeconds }
	firstSecond := func(r OutageResult) float64 { return float64(r.FirstSecondRequests) }
	during := func(r OutageResult) float64 { return float64(r.OutageRequests) }
	burst := func(r OutageResult) float64 { return float64(r.SuccessSecondRequests) }

	rec := Report{Name: "outage-recovery", Unit: "s", Target: Target{Op: AtMost, Value: outageTarget}.String(),
		Ours: Summarize(values(ours, recovery)), ClientGo: Summarize(values(clientGo, recovery)),
		OursCPU: Summarize(values(ours, cpu)), ClientGoCPU: Summarize(values(clientGo, cpu)),
		Detail: map[string]Summary{
			"ours-first-back-s":     Summarize(values(ours, first)),
			"clientgo-first-back-s": Summarize(values(clientGo, first)),
		},
		Note: "seconds from /readyz ok to the last of 10 informers' watch answered 200 (negative: before /readyz said ready; ratio= counts it as 0); " +
			"cpu: each child's CPU from the outage's start until then"}
	rec.Ratio = recoveryRatio(rec.Ours.Median, rec.ClientGo.Median)
	rec.Met = rec.Ratio <= outageTarget
	if rec.ClientGoCPU.Median > 0 {
		rec.CPURatio = rec.OursCPU.Median / rec.ClientGoCPU.Median
	}

	req := Report{Name: "outage-first-second-requests", Unit: "req",
		Ours: Summarize(values(ours, firstSecond)), ClientGo: Summarize(values(clientGo, firstSecond)), Met: true,
		Detail: map[string]Summary{
			"ours-outage-requests":          Summarize(values(ours, during)),
			"clientgo-outage-requests":      Summarize(values(clientGo, during)),
			"ours-first-success-second":     Summarize(values(ours, burst)),
			"clientgo-first-success-second": Summarize(values(clientGo, burst)),
		},
		Note: "requests each child sent in the first second after readiness (ratio= divides by at least 1); " +
			"no target: client-go sends few because it is still backing off; the bound is absolute, 10 informers + 5. " +
			"*-outage-requests: from the outage's start until the last informer watched again; " +
			"*-first-success-second: in the first second after a request of the child first succeeded"}
	req.Ratio = req.Ours.Median / max(req.ClientGo.Median, 1)
	return []Report{rec, req}
}

// recoveryRatio is outage-recovery's ratio of medians: a negative ours
// (back before readiness) counts as 0, and a client-go median under 1 ms
// as 1 ms, so the ratio is never negative or infinite.
func recoveryRatio(ours, clientGo float64) float64 {
	return max(ours, 0) / max(clientGo, 0.001)
}
