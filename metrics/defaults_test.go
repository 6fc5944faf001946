package metrics_test

import (
	"reflect"
	"testing"

	"github.com/kinformer/kinformer/metrics"
)

// instrumentFields returns every instrument field of the struct v points
// to, nested structs included, by path.
func instrumentFields(v reflect.Value, prefix string, out map[string]reflect.Value) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		switch f.Kind() {
		case reflect.Struct:
			instrumentFields(f, prefix+sf.Name+".", out)
		case reflect.Interface:
			out[prefix+sf.Name] = f
		}
	}
}

// TestWithDefaultsFillsEveryNilInstrumentAndKeepsTheOthers checks each set
// of instruments, field by field, so that a field added without a default
// fails here rather than with a nil dereference in a reporting object.
func TestWithDefaultsFillsEveryNilInstrumentAndKeepsTheOthers(t *testing.T) {
	mine := &counter{}
	for name, tc := range map[string]struct {
		defaulted func() any
		keep      func() any
	}{
		"ReflectorMetrics": {
			defaulted: func() any { return metrics.ReflectorMetrics{}.WithDefaults() },
			keep: func() any {
				return metrics.ReflectorMetrics{Skipped: mine, StreamingLists: metrics.ListMetrics{Attempts: mine}}.WithDefaults()
			},
		},
		"InformerMetrics": {defaulted: func() any { return metrics.InformerMetrics{}.WithDefaults() }},
		"HandlerMetrics": {
			defaulted: func() any { return metrics.HandlerMetrics{}.WithDefaults() },
			keep:      func() any { return metrics.HandlerMetrics{Merged: mine}.WithDefaults() },
		},
		"WorkqueueMetrics": {
			defaulted: func() any { return metrics.WorkqueueMetrics{}.WithDefaults() },
			keep:      func() any { return metrics.WorkqueueMetrics{Adds: mine}.WithDefaults() },
		},
		"ShardMetrics": {
			defaulted: func() any { return metrics.ShardMetrics{}.WithDefaults() },
			keep:      func() any { return metrics.ShardMetrics{Dropped: mine}.WithDefaults() },
		},
		"ReplicaMetrics": {
			defaulted: func() any { return metrics.ReplicaMetrics{}.WithDefaults() },
			keep:      func() any { return metrics.ReplicaMetrics{Acquired: mine}.WithDefaults() },
		},
	} {
		v := reflect.ValueOf(tc.defaulted())
		fields := map[string]reflect.Value{}
		instrumentFields(v, "", fields)
		if len(fields) == 0 {
			t.Errorf("%s: no instrument fields found", name)
		}
		for path, f := range fields {
			if f.IsNil() {
				t.Errorf("%s.%s is nil after WithDefaults", name, path)
			}
		}
		if tc.keep == nil {
			continue
		}
		kept := 0
		fields = map[string]reflect.Value{}
		instrumentFields(reflect.ValueOf(tc.keep()), "", fields)
		for _, f := range fields {
			if c, ok := f.Interface().(*counter); ok && c == mine {
				kept++
			}
		}
		if kept == 0 {
			t.Errorf("%s: WithDefaults replaced an instrument that was set", name)
		}
	}
}
