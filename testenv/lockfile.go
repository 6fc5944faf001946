package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often lockFile retries a lock held by another process.
const lockPoll = 250 * time.Millisecond

// lockFile takes an exclusive advisory lock (flock) on path, creating the file if needed, and
// returns the function that releases it. While another process holds the lock it polls,
// calling waiting once, until the lock is free or ctx is done. The kernel drops the lock if
// the holder dies, so a crashed build never blocks the next one.
func lockFile(ctx context.Context, path string, waiting func()) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testenv: lock %s: %w", path, err)
	}
	var tick *time.Ticker
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("testenv: lock %s: %w", path, err)
		}
		if tick == nil {
			waiting()
			tick = time.NewTicker(lockPoll)
			defer tick.Stop()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("testenv: waiting for lock %s: %w", path, context.Cause(ctx))
		case <-tick.C:
		}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
