package informer

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// ErrIncomparableVersion is matched (errors.Is) by the error of a wait for
// a resource version that cannot be ordered: one that is not a positive
// decimal integer without leading zeros, the form Kubernetes guarantees
// comparable since 1.35 (KEP-5504), or a source whose own versions are not
// of that form. The error also wraps apimachinery's
// resourceversion.InvalidResourceVersion naming the version.
var ErrIncomparableVersion = errors.New("resource version cannot be compared")

// compareVersions orders two resource versions as KEP-5504 defines:
// negative, zero or positive as a is older than, the same as, or newer
// than b.
func compareVersions(a, b string) (int, error) {
	c, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrIncomparableVersion, err)
	}
	return c, nil
}

// WaitForResourceVersion blocks until the cache reflects resource version
// rv or a later one — every change the server made up to rv is readable
// through Cache, and so from a Lister — and returns nil; typically rv is
// the version a write of the caller's returned (read your own writes).
// It returns ctx.Err() when ctx ends first, ErrStopped when the informer
// stops first, and an error matching ErrIncomparableVersion when rv, or
// the version the informer is at, cannot be compared. Before Run it waits
// for Run.
//
// It waits for every object the informer caches, so also for changes to
// other objects up to rv; WaitForKey can return sooner for one object. A
// version from a write to another resource (every resource shares etcd's
// counter) is reached when the server's next bookmark passes it, about a
// minute on a quiet resource. Handlers may not have been called yet for
// the changes it waited for: they run on their own goroutines.
func (inf *Shared[T]) WaitForResourceVersion(ctx context.Context, rv string) error {
	return inf.waitForVersion(ctx, rv, nil)
}

// WaitForKey blocks until the cache has caught up with resource version
// rv for the object under key: the cached object has version rv or a
// later one, or the whole cache reflects rv (WaitForResourceVersion), which
// covers a deletion. Errors are those of WaitForResourceVersion.
func (inf *Shared[T]) WaitForKey(ctx context.Context, key, rv string) error {
	return inf.waitForVersion(ctx, rv, func() bool {
		obj, ok, err := inf.cache.indexer.GetByKey(key)
		if err != nil || !ok {
			return false
		}
		c, err := compareVersions(obj.GetResourceVersion(), rv)
		return err == nil && c >= 0
	})
}

// waitForVersion waits for rv (see WaitForResourceVersion), or until
// done, when not nil, reports true: until the version the cache reflects
// (the delta queue's Reached, which the cache writer moves after each
// key it applies, and a bookmark moves when nothing is pending) is rv or
// later.
func (inf *Shared[T]) waitForVersion(ctx context.Context, rv string, done func() bool) error {
	if _, err := compareVersions(rv, rv); err != nil {
		return fmt.Errorf("informer %s: wait for resource version %q: %w", inf.name, rv, err)
	}
	for {
		changed := inf.queue.ReachedChanged() // before the checks, so no change is missed
		if done != nil && done() {
			return nil
		}
		if at := inf.queue.Reached().ResourceVersion; at != "" {
			c, err := compareVersions(at, rv)
			if err != nil {
				return fmt.Errorf("informer %s: wait for resource version %q: informer at %q: %w", inf.name, rv, at, err)
			}
			if c >= 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-inf.stopped:
			return fmt.Errorf("informer %s: wait for resource version %q: %w", inf.name, rv, ErrStopped)
		case <-changed:
		}
	}
}
