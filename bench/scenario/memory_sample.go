package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// heapLiveMetric is the heap the last garbage collection found live: it
// moves only at the end of a GC cycle, so it does not count the garbage
// that accumulates between cycles (that is, GOGC's headroom).
const heapLiveMetric = "/gc/heap/live:bytes"

// readHeapLive returns heapLiveMetric now.
func readHeapLive() uint64 {
	s := []metrics.Sample{{Name: heapLiveMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// readHeapAllocs returns the bytes allocated on the heap since the
// process started (/gc/heap/allocs:bytes): the difference over a phase
// is what it allocated, retained or garbage.
func readHeapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// readStatusKB reads a field given in kB (VmHWM, VmRSS) from a
// /proc/PID/status file.
func readStatusKB(path, field string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	return parseStatusKB(string(b), field)
}

// parseStatusKB finds "field:   N kB" in the text of a /proc status file.
func parseStatusKB(status, field string) (int64, bool) {
	for line := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// statusFile reads fields of this process's /proc/self/status again and
// again without allocating: the file stays open and is read from its
// start into one buffer. A sampler reading it every few milliseconds
// through os.ReadFile made 7.5 KB of garbage per read, 48 MB over a
// 30-second relist at 100,000 objects: more than the relist itself, and
// counted in the peak RSS it measures (million-relist-peak-view).
type statusFile struct {
	f   *os.File
	buf [16 << 10]byte
}

func openStatusFile() (*statusFile, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, err
	}
	return &statusFile{f: f}, nil
}

// kb reads field (in kB) from the file as it is now.
func (s *statusFile) kb(field string) (int64, bool) {
	n, err := s.f.ReadAt(s.buf[:], 0)
	if n == 0 || err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	return parseStatusKB(unsafe.String(&s.buf[0], n), field) // keeps no part of it
}

func (s *statusFile) close() { s.f.Close() }

// readVmHWM reads the peak resident set size, in KB, from a
// /proc/PID/status file.
func readVmHWM(path string) (int64, bool) { return readStatusKB(path, "VmHWM") }

// resetPeakRSS sets this process's VmHWM to its current RSS (Linux 4.0
// and later: writing 5 to /proc/self/clear_refs), so that VmHWM read later
// is the peak since now.
func resetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peaks are the highest values a sampler saw.
type peaks struct {
	heapLive uint64 // heapLiveMetric
	rssKB    int64  // VmRSS
}

// sampler reads heapLiveMetric and VmRSS every period on a goroutine of
// its own, keeping the highest; stop ends it.
type sampler struct {
	quit chan struct{} // closed by stop
	done chan peaks    // receives the result once, when the goroutine ends
}

func startSampler(period time.Duration) *sampler {
	s := &sampler{quit: make(chan struct{}), done: make(chan peaks, 1)}
	go func() { // Exits when stop closes quit.
		var p peaks
		tick := time.NewTicker(period)
		defer tick.Stop()
		// Sampling allocates nothing: its garbage would add to the RSS it
		// measures.
		status, err := openStatusFile()
		if err == nil {
			defer status.close()
		}
		live := []metrics.Sample{{Name: heapLiveMetric}}
		for {
			if metrics.Read(live); live[0].Value.Kind() == metrics.KindUint64 {
				p.heapLive = max(p.heapLive, live[0].Value.Uint64())
			}
			if status == nil {
				if kb, ok := readStatusKB("/proc/self/status", "VmRSS"); ok {
					p.rssKB = max(p.rssKB, kb)
				}
			} else if kb, ok := status.kb("VmRSS"); ok {
				p.rssKB = max(p.rssKB, kb)
			}
			select {
			case <-s.quit:
				s.done <- p
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns what it saw. Call it once.
func (s *sampler) stop() peaks {
	close(s.quit)
	return <-s.done
}

// keysDigest summarizes a cache listed as namespace/name@resourceVersion
// keys (see objectKey): their count and a hash of them sorted. Caches of
// different types (full objects, views) that hold the same versions of
// the same objects have the same digest.
func keysDigest(keys []string) string {
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	h := sha256.New()
	for _, k := range sorted {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%d objects, %s", len(sorted), hex.EncodeToString(h.Sum(nil))[:16])
}
