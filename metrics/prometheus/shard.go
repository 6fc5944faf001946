package prometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/metrics"
)

// shardVecs are the vectors behind metrics.ShardMetrics (labelled by the
// source's informer name) and metrics.ReplicaMetrics (labelled by the
// group's name, in "name" too).
type shardVecs struct {
	serverSide, members, ranges, objects *prometheus.GaugeVec
	dropped, handoffs                    *prometheus.CounterVec
	convergence                          *prometheus.HistogramVec
}

func newShardVecs(b *builder) shardVecs {
	b.sub = "shard"
	return shardVecs{
		serverSide:  b.gauge("server_side", "1 when the server applies the source's shard selector, 0 when the source filters on the client side.", "name"),
		dropped:     b.counter("dropped_total", "Objects received from the server outside the source's shard, dropped on the client side.", "name"),
		members:     b.gauge("members", "Live members of the replica group, as this replica sees them.", "name"),
		ranges:      b.gauge("ranges_owned", "Ranges of the group this replica owns (synced and claimed).", "name"),
		objects:     b.gauge("objects_owned", "Objects cached in the ranges this replica owns.", "name"),
		handoffs:    b.counter("handoffs_total", "Ranges this replica acquired or released.", "name", "direction"),
		convergence: b.histogram("convergence_seconds", "How long, in seconds, this replica took to own its share after the member set changed.", b.durations, "name"),
	}
}

func (v *shardVecs) shardMetrics(name string) metrics.ShardMetrics {
	return metrics.ShardMetrics{
		ServerSide: v.serverSide.WithLabelValues(name),
		Dropped:    v.dropped.WithLabelValues(name),
	}
}

func (v *shardVecs) replicaMetrics(group string) metrics.ReplicaMetrics {
	return metrics.ReplicaMetrics{
		Members:      v.members.WithLabelValues(group),
		RangesOwned:  v.ranges.WithLabelValues(group),
		ObjectsOwned: v.objects.WithLabelValues(group),
		Acquired:     v.handoffs.WithLabelValues(group, "acquired"),
		Released:     v.handoffs.WithLabelValues(group, "released"),
		Convergence:  v.convergence.WithLabelValues(group),
	}
}
