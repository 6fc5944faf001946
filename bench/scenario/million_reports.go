package scenario

import (
	"fmt"
)

// The million scenario's lines (see controlplane_million.go): the curve at
// every size, the million lines at the largest, each from the runs of
// every side, with what a side that stopped at the cap had.

// capped returns how many runs of side stopped at the cap, and the most
// objects one of them had.
func (m memoryRuns) capped(side Side) (n, objects int) {
	for _, r := range m[side] {
		if r.Capped {
			n++
			objects = max(objects, r.Objects)
		}
	}
	return n, objects
}

// cappedNote says that side's runs stopped at the cap, or nothing.
func (m memoryRuns) cappedNote(side Side, want, capMB int) string {
	n, objects := m.capped(side)
	if n == 0 {
		return ""
	}
	rss := Summarize(m.values(side, func(r MemResult) float64 { return float64(r.PeakRSSKB) / 1024 }))
	return fmt.Sprintf("%s did not fit: %d of %d runs stopped at the %d MB cap (peak RSS %.0f MB median) with at most %d of %d objects in; its figures are at the stop",
		millionSideName[side], n, len(m[side]), capMB, rss.Median, objects, want)
}

// peakRSS and heapPerPod of a run.
func peakRSSMBOf(r MemResult) float64 { return float64(r.PeakRSSKB) / 1024 }

// curveReports are the curve's lines at n objects: the view against
// client-go full, with every side's median in the detail.
func curveReports(runs memoryRuns, n int) []Report {
	heap := pairReport(fmt.Sprintf("curve-heap-per-object-%d", n), "B/object", projectedTarget,
		runs.values(MemOursView, heapPerPod), runs.values(MemClientGo, heapPerPod))
	rss := pairReport(fmt.Sprintf("curve-rss-%d", n), "MB", scaleRSSTarget,
		runs.values(MemOursView, peakRSSMBOf), runs.values(MemClientGo, peakRSSMBOf))
	heap.Detail, rss.Detail = map[string]Summary{}, map[string]Summary{}
	for _, side := range millionSides()[1:] {
		name := millionSideName[side]
		heap.Detail[name+"-b-per-object"] = Summarize(runs.values(side, heapPerPod))
		rss.Detail[name+"-peak-mb"] = Summarize(runs.values(side, peakRSSMBOf))
		if c, _ := runs.capped(side); c > 0 {
			heap.Detail[name+"-capped-runs"] = Summarize([]float64{float64(c)})
		}
	}
	heap.Note = "ours= kinformer's view, clientgo= client-go full; every side's figure below"
	rss.Note = heap.Note
	if note := runs.cappedNote(MemClientGo, n, 0); note != "" {
		heap.Note += "; client-go full stopped at the cap (see the million lines)"
		rss.Note = heap.Note
	}
	return []Report{runs.withCPU(heap, MemOursView, MemClientGo), runs.withCPU(rss, MemOursView, MemClientGo)}
}

// viewRSSLimitMB is million-rss-view's absolute bound.
const viewRSSLimitMB = 1000

// millionReports are the lines at the largest size.
func millionReports(runs memoryRuns, capMB int) []Report {
	want := 0
	for _, r := range runs[MemFloor] {
		want = max(want, r.Objects)
	}
	ran := func(sides ...Side) bool {
		for _, s := range sides {
			if len(runs[s]) == 0 {
				return false
			}
		}
		return true
	}
	var reports []Report
	cgNote := runs.cappedNote(MemClientGo, want, capMB)
	if ran(MemOursView, MemClientGo) {
		heap := pairReport("million-heap-per-object-view", "B/object", projectedTarget,
			runs.values(MemOursView, heapPerPod), runs.values(MemClientGo, heapPerPod))
		heap.Note = "ours= kinformer's view, clientgo= client-go full"
		if cgNote != "" {
			heap.Note += "; " + cgNote + " (its heap per object is over the objects it had)"
		}
		reports = append(reports, runs.withCPU(heap, MemOursView, MemClientGo))
	}
	if ran(MemOursView) {
		reports = append(reports, rssViewReport(runs, cgNote))
	}
	millis := func(r MemResult) float64 { return r.Millis }
	cpu := func(r MemResult) float64 { return r.CPUSeconds }
	for _, side := range millionSides()[1:] {
		if !ran(side, MemFloor) {
			continue
		}
		floorMB := Summarize(runs.values(MemFloor, func(r MemResult) float64 { return float64(r.Bytes) / 1e6 }))
		name := millionSideName[side]
		note := runs.cappedNote(side, want, capMB)
		t := pairReport("million-sync-time-"+name, "ms", 1.3, runs.values(side, millis), runs.values(MemFloor, millis))
		c := informational("million-sync-cpu-"+name, "s", runs.values(side, cpu), runs.values(MemFloor, cpu), "")
		t.Note = fmt.Sprintf("ours= %s's sync, clientgo= the floor (a streaming list of %.0f MB read and discarded)", name, floorMB.Median)
		c.Note = fmt.Sprintf("ours= %s's sync CPU, clientgo= the floor's", name)
		if side == MemClientGo || side == MemClientGoNoMF || note != "" {
			t.Target, t.Met = "", true // client-go's, or a side stopped short: no verdict
		}
		if note != "" {
			t.Note += "; " + note
			c.Note += "; " + note
		}
		reports = append(reports, runs.withCPU(t, side, MemFloor), runs.withCPU(c, side, MemFloor))
	}
	relist := func(f func(*RelistResult) float64) []float64 {
		var out []float64
		for _, r := range runs[MemOursView] {
			if r.Relist != nil {
				out = append(out, f(r.Relist))
			}
		}
		return out
	}
	if peaks := relist((*RelistResult).rssRatio); len(peaks) > 0 {
		r := Report{Name: "million-relist-peak-view", Unit: "x", Target: Target{Op: AtMost, Value: relistTarget}.String(),
			Ours: Summarize(peaks), ClientGo: Summarize(relist((*RelistResult).heapRatio)),
			Note: "ours= the view's peak RSS during a forced relist / its RSS before; clientgo= the same of its live heap (client-go cannot hold the objects to relist them); ratio= is ours="}
		r.Ratio = r.Ours.Median
		r.Met = r.Ratio <= relistTarget
		r.Detail = map[string]Summary{
			"steady-rss-mb":      Summarize(relist(func(r *RelistResult) float64 { return float64(r.SteadyRSSKB) / 1024 })),
			"peak-rss-mb":        Summarize(relist(func(r *RelistResult) float64 { return float64(r.PeakRSSKB) / 1024 })),
			"relist-ms":          Summarize(relist(func(r *RelistResult) float64 { return r.Millis })),
			"alloc-b-per-object": Summarize(relist((*RelistResult).AllocPerObject)),
		}
		reports = append(reports, r)
	}
	return reports
}

// rssViewReport is million-rss-view: the view's peak RSS against its
// absolute bound, its ratio to client-go full's when client-go ran
// (cgNote: client-go's runs stopped at the cap), else to the bound.
func rssViewReport(runs memoryRuns, cgNote string) Report {
	view := runs.values(MemOursView, peakRSSMBOf)
	note := fmt.Sprintf("the target is absolute: the view's peak RSS at most %d MB; ", viewRSSLimitMB)
	var rss Report
	if len(runs[MemClientGo]) > 0 {
		rss = runs.withCPU(pairReport("million-rss-view", "MB", 0, view, runs.values(MemClientGo, peakRSSMBOf)), MemOursView, MemClientGo)
		note += "ratio= is to client-go full"
		if cgNote != "" {
			note += "; " + cgNote + " (so the ratio is an upper bound)"
		}
	} else {
		rss = pairReport("million-rss-view", "MB", 0, view, []float64{viewRSSLimitMB})
		note += "client-go did not run (MillionOptions.Sides): clientgo= and ratio= are the bound's"
	}
	rss.Target = Target{Op: AtMost, Value: viewRSSLimitMB}.String() + "MB"
	rss.Met = rss.Ours.Median <= viewRSSLimitMB
	rss.Note = note
	rss.Detail = map[string]Summary{
		"alloc-b-per-object": Summarize(runs.values(MemOursView, MemResult.AllocPerObject)),
		"heap-b-per-object":  Summarize(runs.values(MemOursView, heapPerPod)),
	}
	return rss
}
