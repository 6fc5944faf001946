// Command curve draws the cost curve of the million-object scenario as an
// SVG: heap per object and peak RSS of every side against the number of
// objects
// (both axes logarithmic), from the curve-heap-per-object-N and
// curve-rss-N lines of a results file that `make bench-million` wrote.
// A point of a run stopped at the memory cap is drawn hollow: the side
// did not fit, and the point is where it was stopped.
//
//	go run ./cmd/curve [-in results/controlplane-million.json] [-out million-curve.svg]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/bench/scenario"
)

func main() {
	in := flag.String("in", "results/controlplane-million.json", "the results of make bench-million")
	out := flag.String("out", "million-curve.svg", "where to write the SVG")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "curve:", err)
		os.Exit(1)
	}
}

// sides are drawn in this order, with these names and colours.
var sides = []struct{ key, label, color string }{
	{"view", "kinformer view", "#1b7837"},
	{"metadata", "kinformer metadata-only", "#5aae61"},
	{"full", "kinformer full objects", "#2166ac"},
	{"clientgo-nomf", "client-go, managedFields dropped", "#f4a582"},
	{"clientgo", "client-go full objects", "#b2182b"},
}

// point is one side's median at one size.
type point struct {
	pods   float64
	value  float64
	capped bool
}

// series are the points of every side, by side key, for one figure.
type series map[string][]point

func run(in, out string) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var res struct {
		Scenarios []scenario.Report `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	heap, rss := series{}, series{}
	for _, r := range res.Scenarios {
		var fig series
		var suffix string
		var n string
		switch {
		case strings.HasPrefix(r.Name, "curve-heap-per-object-"):
			fig, suffix, n = heap, "-b-per-object", strings.TrimPrefix(r.Name, "curve-heap-per-object-")
		case strings.HasPrefix(r.Name, "curve-rss-"):
			fig, suffix, n = rss, "-peak-mb", strings.TrimPrefix(r.Name, "curve-rss-")
		default:
			continue
		}
		pods, err := strconv.Atoi(n)
		if err != nil {
			return fmt.Errorf("%s: line %s: %w", in, r.Name, err)
		}
		for _, s := range sides {
			d, ok := r.Detail[s.key+suffix]
			if !ok {
				continue
			}
			_, capped := r.Detail[s.key+"-capped-runs"]
			fig[s.key] = append(fig[s.key], point{float64(pods), d.Median, capped})
		}
	}
	if len(heap) == 0 {
		return fmt.Errorf("%s: no curve lines (curve-heap-per-object-N)", in)
	}
	for _, fig := range []series{heap, rss} {
		for k := range fig {
			slices.SortFunc(fig[k], func(a, b point) int { return int(a.pods - b.pods) })
		}
	}
	var svg strings.Builder
	const w, h = 960, 380
	fmt.Fprintf(&svg, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&svg, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	panel(&svg, 60, 30, 380, 250, "heap per object (bytes, live after GC)", heap, formatBytes)
	panel(&svg, 540, 30, 380, 250, "peak RSS (MB)", rss, formatMB)
	// The legend, under both panels.
	for i, s := range sides {
		x, y := 60+(i%3)*300, 330+(i/3)*20
		fmt.Fprintf(&svg, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`, x, y-4, x+24, y-4, s.color)
		fmt.Fprintf(&svg, `<text x="%d" y="%d">%s</text>`+"\n", x+30, y, s.label)
	}
	fmt.Fprintf(&svg, `<text x="660" y="350"><tspan>hollow: stopped at the memory cap</tspan></text>`+"\n")
	svg.WriteString("</svg>\n")
	return os.WriteFile(out, []byte(svg.String()), 0o644)
}

// panel draws one figure in the box at (x0, y0) of size w × h: log x
// (pods), log y.
func panel(svg *strings.Builder, x0, y0, w, h float64, title string, fig series, label func(float64) string) {
	minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, pts := range fig {
		for _, p := range pts {
			if p.value <= 0 {
				continue
			}
			minX, maxX = math.Min(minX, p.pods), math.Max(maxX, p.pods)
			minY, maxY = math.Min(minY, p.value), math.Max(maxY, p.value)
		}
	}
	// Whole decades around the data.
	lx0, lx1 := math.Floor(math.Log10(minX)), math.Ceil(math.Log10(maxX))
	ly0, ly1 := math.Floor(math.Log10(minY)), math.Ceil(math.Log10(maxY))
	if lx1 == lx0 {
		lx1++
	}
	if ly1 == ly0 {
		ly1++
	}
	px := func(v float64) float64 { return x0 + (math.Log10(v)-lx0)/(lx1-lx0)*w }
	py := func(v float64) float64 { return y0 + h - (math.Log10(v)-ly0)/(ly1-ly0)*h }
	fmt.Fprintf(svg, `<text x="%g" y="%g" font-weight="bold">%s</text>`+"\n", x0, y0-10, title)
	fmt.Fprintf(svg, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`+"\n", x0, y0, w, h)
	for d := lx0; d <= lx1; d++ {
		x := px(math.Pow(10, d))
		fmt.Fprintf(svg, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#ddd"/>`, x, y0, x, y0+h)
		fmt.Fprintf(svg, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", x, y0+h+16, formatPods(math.Pow(10, d)))
	}
	for d := ly0; d <= ly1; d++ {
		y := py(math.Pow(10, d))
		fmt.Fprintf(svg, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#ddd"/>`, x0, y, x0+w, y)
		fmt.Fprintf(svg, `<text x="%g" y="%g" text-anchor="end">%s</text>`+"\n", x0-6, y+4, label(math.Pow(10, d)))
	}
	fmt.Fprintf(svg, `<text x="%g" y="%g" text-anchor="middle">objects</text>`+"\n", x0+w/2, y0+h+32)
	for _, s := range sides {
		pts := fig[s.key]
		var path []string
		for _, p := range pts {
			if p.value > 0 {
				path = append(path, fmt.Sprintf("%.1f,%.1f", px(p.pods), py(p.value)))
			}
		}
		if len(path) > 1 {
			fmt.Fprintf(svg, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(path, " "), s.color)
		}
		for _, p := range pts {
			if p.value <= 0 {
				continue
			}
			fill := s.color
			if p.capped {
				fill = "white"
			}
			fmt.Fprintf(svg, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" stroke-width="2"><title>%s at %s objects: %s</title></circle>`+"\n",
				px(p.pods), py(p.value), fill, s.color, s.label, formatPods(p.pods), label(p.value))
		}
	}
}

func formatPods(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func formatBytes(v float64) string {
	if v >= 1e3 {
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + " KB"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " B"
}

func formatMB(v float64) string {
	if v >= 1e3 {
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + " GB"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + " MB"
}
