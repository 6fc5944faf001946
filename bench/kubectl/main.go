// Command kubectl is kubectl built from k8s.io/kubectl at the version this module pins,
// so that `make bench-cli` measures the kinformer command against the kubectl of the
// local control plane's release, built by make like everything else the benchmarks run
// (bench/README.md, "The command at 100,000 pods"). It adds nothing to kubectl: the
// command tree is k8s.io/kubectl's, run as cobra runs any command.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
