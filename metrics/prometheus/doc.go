// Package prometheus reports kinformer's metrics to Prometheus.
//
// One [Provider], built by [NewProvider], implements every provider
// interface of the metrics package: metrics.Provider (reflectors,
// informers, handler registrations), metrics.WorkqueueProvider (work
// queues) and metrics.ShardProvider (shard-filtered sources, replica
// groups). Pass it as the Metrics option of whatever reports: a factory,
// an informer, a controller, a reflector, a work queue.
//
// The metric names, types and labels are listed in the metrics package's
// documentation. They sit under the subsystems "reflector", "informer",
// "workqueue" and "shard", behind an optional namespace (Options.Namespace).
// Work queue names are the ones Kubernetes components already export, so
// existing dashboards keep working. Every series carries a "name" label
// with the reporting object's name; objects that share a name share
// series.
package prometheus
