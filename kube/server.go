package kube

import (
	"context"

	"github.com/kinformer/kinformer/internal/serverprobe"
)

// newServer: see serverprobe.New.
var newServer = serverprobe.New

// startProbeLocked runs the server's probe under ctx the first time the
// factory starts; Shutdown stops it. f.mu is held.
func (f *Factory) startProbeLocked(ctx context.Context) {
	if f.stopProbe != nil || f.server == nil {
		return
	}
	ctx, f.stopProbe = context.WithCancel(ctx)
	f.wg.Go(func() { f.server.Run(ctx) })
}
