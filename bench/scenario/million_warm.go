package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kinformer/kinformer/kube"
)

// warm-restart-view-fresh-time of the million scenario: kinformer's view
// informer of the scenario's kind (ReplicaSetView, PodView) with a
// checkpoint, restarted from a fresh one (the server still has its
// version: the cache comes from the file and the watch resumes) against
// the same process starting cold (no file). Each run is a child process
// timed from the parent starting it until the informer has synced, as in
// the warm-restart scenario; the first cold run writes the checkpoint the
// fresh runs start from.

// Sides of warm-restart-view-fresh-time.
const (
	WarmViewCold  Side = "warm-view-cold"
	WarmViewFresh Side = "warm-view-fresh"
)

func isWarmViewSide(s Side) bool { return s == WarmViewCold || s == WarmViewFresh }

// warmViewResult is what a warm view child reports.
type warmViewResult struct {
	ChildResult
	// CPUSeconds is the child's CPU time (user and system) when synced:
	// everything it did since it started.
	CPUSeconds float64 `json:"cpuSeconds"`
	// Unsupported, when set, says why this build cannot checkpoint a
	// view (kube refused the informer); nothing was measured.
	Unsupported string `json:"unsupported,omitempty"`
}

// warmViewChild is a warm view child: the view informer of every object
// of ChildKindEnv's kind with a checkpoint in ChildCheckpointDirEnv, timed
// from ChildStartEnv until synced. Its shutdown writes the checkpoint.
func warmViewChild(ctx context.Context, w io.Writer) error {
	startNanos, err := strconv.ParseInt(os.Getenv(ChildStartEnv), 10, 64)
	if err != nil {
		return fmt.Errorf("%s: %w", ChildStartEnv, err)
	}
	start := time.Unix(0, startNanos)
	want, err := strconv.Atoi(os.Getenv(ChildPodsEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", ChildPodsEnv, err)
	}
	cfg, err := kube.LoadConfig(kube.ConfigOptions{Kubeconfig: os.Getenv(ChildKubeconfigEnv)})
	if err != nil {
		return err
	}
	f, err := kube.NewFactory(cfg, kube.FactoryOptions{
		Checkpoints:  kube.Checkpoints{Dir: os.Getenv(ChildCheckpointDirEnv)},
		ErrorHandler: func(err error) { fmt.Fprintln(os.Stderr, "warm view child:", err) },
	})
	if err != nil {
		return err
	}
	defer f.Shutdown()
	kind, err := childKind()
	if err != nil {
		return err
	}
	synced, list, err := kind.warmView(ctx, f)
	if err != nil {
		return json.NewEncoder(w).Encode(warmViewResult{Unsupported: err.Error()})
	}
	f.Start(ctx)
	if !synced(ctx) {
		return ctx.Err()
	}
	var res warmViewResult
	res.Millis = float64(time.Since(start).Microseconds()) / 1e3
	res.CPUSeconds = processCPU().Seconds()
	res.PeakRSSKB, _ = readVmHWM("/proc/self/status")
	keys := list()
	res.Digest = keysDigest(keys)
	f.Shutdown() // writes the checkpoint
	if len(keys) != want {
		return fmt.Errorf("synced %d %s, want %d", len(keys), kind.name, want)
	}
	return json.NewEncoder(w).Encode(res)
}

// runWarmViewChild runs one warm view child with its checkpoint in dir.
func runWarmViewChild(ctx context.Context, self []string, side Side, cl *cluster, kind *millionKind, pods int, dir string) (warmViewResult, error) {
	res, _, err := runChildJSON[warmViewResult](ctx, childRun{args: self, env: childEnv(
		ChildSideEnv, string(side),
		ChildKindEnv, kind.name,
		ChildKubeconfigEnv, cl.kubeconfig,
		ChildPodsEnv, strconv.Itoa(pods),
		ChildCheckpointDirEnv, dir,
		ChildStartEnv, strconv.FormatInt(time.Now().UnixNano(), 10))})
	return res, err
}

// warmView measures warm-restart-view-fresh-time at pods: Count fresh
// restarts against WarmColdCount cold starts, with viewSync (the view
// side's sync times in ms at the same size, when it ran) in the detail;
// nil (and a progress line saying why) when this build cannot checkpoint
// a view.
func warmView(ctx context.Context, self []string, cl *cluster, pods int, opts MillionOptions, viewSync []float64, say sayFunc) (*Report, error) {
	work, err := os.MkdirTemp("", "kinformer-million-warm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	fresh := filepath.Join(work, "fresh")
	// The first cold run writes the checkpoint the fresh runs start from,
	// and counts as run 1's cold side (a sync of a million objects takes
	// minutes).
	if err := settle(ctx, opts.Settle); err != nil { // as before every other run
		return nil, err
	}
	say("warm restart of the view: run 1 cold, which writes the checkpoint")
	first, err := runWarmViewChild(ctx, self, WarmViewCold, cl, opts.kind, pods, fresh)
	if err != nil {
		return nil, fmt.Errorf("warm-restart-view (%s, run 1, writing the checkpoint): %w", WarmViewCold, err)
	}
	if first.Unsupported != "" {
		say("warm-restart-view-fresh-time NOT MEASURED: this build refuses a view's checkpoint (%s)", first.Unsupported)
		return nil, nil
	}
	times, rss, cpu := map[Side][]float64{}, map[Side][]float64{}, map[Side][]float64{}
	record := func(i int, side Side, res warmViewResult) {
		say("warm view run %d %-16s %8.0f ms  CPU %6.2f s  peak RSS %7.1f MB", i+1, side, res.Millis, res.CPUSeconds, float64(res.PeakRSSKB)/1024)
		times[side] = append(times[side], res.Millis)
		rss[side] = append(rss[side], float64(res.PeakRSSKB)/1024)
		cpu[side] = append(cpu[side], res.CPUSeconds)
	}
	record(0, WarmViewCold, first)
	digest := first.Digest
	for i := range opts.Count {
		for _, side := range alternating(i, []Side{WarmViewCold, WarmViewFresh}) {
			if side == WarmViewCold && (i == 0 || i >= opts.WarmColdCount) {
				continue // the first run, or enough cold ones
			}
			if err := settle(ctx, opts.Settle); err != nil {
				return nil, err
			}
			dir := filepath.Join(work, fmt.Sprintf("run-%d-%s", i, side))
			if side == WarmViewFresh {
				if err := copyDir(fresh, dir); err != nil {
					return nil, err
				}
			}
			res, err := runWarmViewChild(ctx, self, side, cl, opts.kind, pods, dir)
			if err == nil && res.Unsupported != "" {
				err = errors.New(res.Unsupported)
			}
			if err == nil && res.Digest != digest {
				err = fmt.Errorf("%w: digest %q, earlier runs %q", ErrMismatch, res.Digest, digest)
			}
			if err != nil {
				return nil, fmt.Errorf("warm-restart-view (%s, run %d): %w", side, i+1, err)
			}
			record(i, side, res)
			if err := os.RemoveAll(dir); err != nil {
				return nil, err
			}
		}
	}
	r := pairReport("warm-restart-view-fresh-time", "ms", 0.25, times[WarmViewFresh], times[WarmViewCold])
	r.Note = "ours= a restart of the view from a fresh checkpoint, clientgo= the same process cold (no file); from process start to synced"
	r.Detail = map[string]Summary{"fresh-peak-rss-mb": Summarize(rss[WarmViewFresh]), "cold-peak-rss-mb": Summarize(rss[WarmViewCold])}
	if len(viewSync) > 0 {
		// The view side's syncs of this run: the spread of a cold sync
		// that the cold side's single run does not show.
		r.Detail["view-side-sync-ms"] = Summarize(viewSync)
	}
	r.OursCPU, r.ClientGoCPU = Summarize(cpu[WarmViewFresh]), Summarize(cpu[WarmViewCold])
	if r.ClientGoCPU.Median > 0 {
		r.CPURatio = r.OursCPU.Median / r.ClientGoCPU.Median
	}
	return &r, nil
}
