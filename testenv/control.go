package testenv

import (
	"context"
	"fmt"
)

// StartAPIServer starts the apiserver if it is not running, with the same port, flags and
// credentials as before, so clients holding RESTConfig reconnect to it unchanged, and returns
// once its /readyz succeeds. If it is already running, StartAPIServer only waits for it to be
// ready. ctx bounds the wait, not the life of the process: a server that does not become ready
// in time keeps running until StopAPIServer or Stop. A server that exits while starting
// (a bad flag in Options.APIServerFlags, say) is an error that includes the end of its log.
func (e *Env) StartAPIServer(ctx context.Context) error {
	e.lifecycle.Lock()
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		e.lifecycle.Unlock()
		return fmt.Errorf("start apiserver: %w", ErrStopped)
	}
	p := e.apiserver
	if p == nil {
		var err error
		if p, err = startProcess("kube-apiserver", e.bins.APIServer, e.apiArgs, e.APIServerLogPath()); err != nil {
			e.mu.Unlock()
			e.lifecycle.Unlock()
			return err
		}
		e.apiserver = p
	}
	e.mu.Unlock()
	e.lifecycle.Unlock()

	if err := waitReady(ctx, p, e.probe, e.apiURL, e.creds.adminToken); err != nil {
		return withLogTail(err, e.APIServerLogPath())
	}
	return nil
}

// StopAPIServer stops the apiserver, leaving etcd and its data in place, and returns once
// the process has exited. It sends SIGTERM, so the apiserver shuts down as in a rolling
// restart: it stops accepting connections and ends open watches. If ctx is done first the
// process is killed. Clients see connection errors until StartAPIServer. Stopping a stopped
// apiserver does nothing.
func (e *Env) StopAPIServer(ctx context.Context) error {
	e.lifecycle.Lock()
	defer e.lifecycle.Unlock()
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return fmt.Errorf("stop apiserver: %w", ErrStopped)
	}
	p := e.apiserver
	e.apiserver = nil
	e.mu.Unlock()
	if p == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- p.terminate() }() // Exits when the process has been reaped.
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		p.kill()
		<-done
		return fmt.Errorf("testenv: apiserver killed: %w", context.Cause(ctx))
	}
}

// RestartAPIServer stops the apiserver and starts it again (see StopAPIServer and
// StartAPIServer), returning once the new process is ready.
func (e *Env) RestartAPIServer(ctx context.Context) error {
	if err := e.StopAPIServer(ctx); err != nil {
		return err
	}
	return e.StartAPIServer(ctx)
}

// CompactEtcd discards etcd's history up to now and returns the revision it compacted at,
// which is one past the newest resource version any client could have seen before the call
// (the compaction itself writes that revision; see below). Afterwards etcd refuses reads below
// that revision and watches that would start below it, that is:
//
//   - a list with resourceVersionMatch=Exact at any version seen before the call,
//   - a continue token issued before the call,
//   - a watch from any version seen before the call except the very newest (a watch from
//     version v starts at v+1, which for the newest is the compaction's own revision),
//
// and the apiserver answers them with 410 Gone (reason Expired) — when they reach etcd.
// With the watch cache on (the default) watches are served from the cache's history, which
// compaction does not shorten, and lists from cache snapshots, which the apiserver drops
// within about 15 seconds of the compaction; see the package documentation for what a test
// should expect in each mode.
//
// Like the apiserver's own compactor, CompactEtcd records the revision under etcd's
// "compact_rev_key" before compacting: that write is the revision compacted at.
func (e *Env) CompactEtcd(ctx context.Context) (int64, error) {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return 0, fmt.Errorf("compact etcd: %w", ErrStopped)
	}
	return e.etcdAPI.compactAll(ctx)
}
