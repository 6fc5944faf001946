package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestNum(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0.5, "0.5"},
		{999, "999"},
		{1500, "1.5k"},
		{2_345_678, "2.35M"},
	}
	for _, tt := range tests {
		if got := num(tt.v); got != tt.want {
			t.Errorf("num(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestWriteJSONCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results", "x.json")
	if err := writeJSON(path, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := json.Unmarshal(b, &got); err != nil || got["a"] != 1 {
		t.Fatalf("read back %s: %v", b, err)
	}
}
