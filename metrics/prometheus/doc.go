// Package prometheus reports kinformer's metrics to Prometheus.
//
// Each reporting package has its own provider here, in its own file, built
// by one constructor that registers that package's collectors:
// [NewWorkqueueProvider] for work queues. Pass the provider in the options
// of the object that reports (for example workqueue.Options.Metrics).
//
// Metric names follow the ones Kubernetes components already export, so
// existing dashboards keep working; every series carries a "name" label with
// the reporting object's name.
package prometheus
