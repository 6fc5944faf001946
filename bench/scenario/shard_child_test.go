package scenario

import (
	"encoding/json"
	"testing"

	"github.com/kinformer/kinformer/bench/internal/podsync"
)

// cmd/shardchild prints a podsync.Result, which the parent reads as a
// ChildResult: every field must come through.
func TestShardChildResultReadsAsChildResult(t *testing.T) {
	b, err := json.Marshal(podsync.Result{Millis: 12.5, Digest: "3 objects, abc", PeakRSSKB: 4096})
	if err != nil {
		t.Fatal(err)
	}
	var got ChildResult
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if want := (ChildResult{Millis: 12.5, Digest: "3 objects, abc", PeakRSSKB: 4096}); got != want {
		t.Fatalf("read %+v from %s, want %+v", got, b, want)
	}
}
