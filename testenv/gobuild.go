package testenv

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"

	"github.com/kinformer/kinformer/testenv/internal/goprogress"
)

// goBuild compiles the two commands of the controlplane module in src into outDir, showing
// progress on m (a line redrawn in place on a terminal, a line every 200 packages and a
// heartbeat otherwise). Cancelling ctx kills the go command and its compilers.
func goBuild(ctx context.Context, goTool, src, outDir string, flags []string, m *goprogress.Meter) error {
	pkgs := []string{"./cmd/etcd", "./cmd/kube-apiserver"}

	// Listing the dependencies first gives the total for the progress; on a fresh machine it
	// is also the step that downloads the modules, counted as it goes.
	var list bytes.Buffer
	cmd := exec.CommandContext(ctx, goTool, append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir, cmd.Env, cmd.Stdout = src, buildEnv(), &list
	if err := goprogress.Run(ctx, cmd, m); err != nil {
		return fmt.Errorf("testenv: listing the control plane's packages failed: %w", err)
	}
	m.SetTotal(bytes.Count(list.Bytes(), []byte("\n")))

	args := append([]string{"build", "-v", "-o", outDir + "/"}, flags...)
	cmd = exec.CommandContext(ctx, goTool, append(args, pkgs...)...)
	cmd.Dir, cmd.Env, cmd.Stdout = src, buildEnv(), io.Discard
	if err := goprogress.Run(ctx, cmd, m); err != nil {
		return fmt.Errorf("testenv: go build of the control plane failed: %w", err)
	}
	return nil
}
