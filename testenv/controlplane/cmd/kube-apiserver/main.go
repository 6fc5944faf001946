// Command kube-apiserver is the Kubernetes API server, built from k8s.io/kubernetes at the
// version pinned in this module's go.mod. The testenv package runs it as a child process; it
// takes the upstream kube-apiserver flags unchanged.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones resolve without the host's zoneinfo.

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric on /metrics
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
