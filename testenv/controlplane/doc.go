// Package controlplane only anchors this module, which holds the main packages of the two
// control-plane processes that testenv runs: cmd/etcd and cmd/kube-apiserver.
//
// It is a separate module so that the dependency graphs of etcd and k8s.io/kubernetes never
// meet the graphs of kinformer or of testenv; testenv builds these commands with
// `go build` into a cache directory and runs them as child processes.
package controlplane
