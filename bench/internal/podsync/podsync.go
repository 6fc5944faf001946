// Package podsync is what a benchmark child that syncs pods shares with
// the scenario that started it, kept free of client-go's informers so
// that a child built from it alone (cmd/shardchild) carries only
// kinformer: the result it prints, the digest of its cache, and the wait
// for its handler to have been handed every pod.
package podsync

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/shard"
)

// Result is what a child prints as its last line, a JSON object: the form
// of scenario.ChildResult.
type Result struct {
	// Millis is the time from the informer's start until the handler has
	// been handed every pod.
	Millis float64 `json:"millis"`
	// Digest is Digest of the cached pods.
	Digest string `json:"digest"`
	// PeakRSSKB is the child's VmHWM just before it reports, 0 where
	// there is no /proc.
	PeakRSSKB int64 `json:"peakRSSKB,omitempty"`
}

// Digest summarizes a cache's content: every key with the resource
// version and generation of its object, sorted, hashed. Two caches with
// the same digest hold the same versions of the same objects.
func Digest(pods []*corev1.Pod) string {
	type entry struct {
		key string
		rv  string
		gen int64
	}
	entries := make([]entry, len(pods))
	for i, p := range pods {
		entries[i] = entry{p.Namespace + "/" + p.Name, p.ResourceVersion, p.Generation}
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	h := sha256.New()
	var buf [8]byte
	for _, e := range entries {
		h.Write([]byte(e.key))
		h.Write([]byte{0})
		h.Write([]byte(e.rv))
		binary.LittleEndian.PutUint64(buf[:], uint64(e.gen))
		h.Write(buf[:])
	}
	return fmt.Sprintf("%d objects, %s", len(entries), hex.EncodeToString(h.Sum(nil))[:16])
}

// Timeout is how long Counter.Wait waits for the last pod.
const Timeout = 10 * time.Minute

// Counter counts the pods a handler is handed until it has seen want.
// Its zero value is not usable: make one with NewCounter.
type Counter struct {
	want int64
	seen atomic.Int64
	all  chan struct{} // closed by the Add that reaches want
	once sync.Once
}

// NewCounter returns a Counter that waits for want pods.
func NewCounter(want int) *Counter {
	c := &Counter{want: int64(want), all: make(chan struct{})}
	if want <= 0 {
		c.once.Do(func() { close(c.all) })
	}
	return c
}

// Add counts one pod; safe from any goroutine.
func (c *Counter) Add() {
	if c.seen.Add(1) >= c.want {
		c.once.Do(func() { close(c.all) })
	}
}

// Wait returns once want pods were counted, or an error when ctx ends or
// Timeout passes first.
func (c *Counter) Wait(ctx context.Context) error {
	select {
	case <-c.all:
		return nil
	default:
	}
	t := time.NewTimer(Timeout)
	defer t.Stop()
	select {
	case <-c.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("handler saw %d of %d pods after %v", c.seen.Load(), c.want, Timeout)
	}
}

// Check returns the Digest of pods, what side cached, or an error if they
// are not exactly want pods all inside set.
func Check(side string, pods []*corev1.Pod, set shard.Set, want int) (string, error) {
	var outside int
	for _, p := range pods {
		if !set.Contains(p) {
			outside++
		}
	}
	if outside > 0 || len(pods) != want {
		return "", fmt.Errorf("%s cached %d pods, %d outside the shard; want %d", side, len(pods), outside, want)
	}
	return Digest(pods), nil
}
