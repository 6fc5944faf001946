package fake

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/kinformer/kinformer/listwatch"
)

// List serves one page. Resource-version rules, as kube-apiserver:
//   - Continue set: the snapshot the token pins, after the token's key;
//     ErrExpired once that snapshot is older than the compaction point.
//   - "" : the current state (a consistent read).
//   - "0": the current state; Limit is ignored with ServeZeroFromCache.
//   - N with MatchExact, or with MatchDefault and a Limit: the state at
//     exactly N (read from storage); ErrExpired if N is compacted.
//   - N otherwise (NotOlderThan): the current state.
//   - N newer than the current version: ErrTooLargeResourceVersion.
//
// Items are in key order; a page ends with a continue token when more
// items follow.
func (s *Source[T]) List(ctx context.Context, opts listwatch.Options) (listwatch.Page[T], error) {
	if err := s.admit(ctx, opts, false); err != nil {
		return listwatch.Page[T]{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := opts.Limit
	var at int64
	var after string
	if opts.Continue != "" {
		var err error
		at, after, err = parseToken(opts.Continue)
		if err != nil {
			return listwatch.Page[T]{}, err
		}
		if at < s.base {
			s.stats.Expired++
			return listwatch.Page[T]{}, fmt.Errorf("continue token at %d, compacted at %d: %w", at, s.base, listwatch.ErrExpired)
		}
	} else {
		switch opts.ResourceVersion {
		case "":
			at = s.rv
		case "0":
			at = s.rv
			if s.opts.ServeZeroFromCache {
				limit = 0
			}
		default:
			n, err := s.parseVersionLocked(opts.ResourceVersion)
			if err != nil {
				return listwatch.Page[T]{}, err
			}
			exact := opts.ResourceVersionMatch == listwatch.MatchExact ||
				(opts.ResourceVersionMatch == listwatch.MatchDefault && limit > 0)
			at = s.rv
			if exact {
				if n < s.base {
					s.stats.Expired++
					return listwatch.Page[T]{}, fmt.Errorf("list at %d, compacted at %d: %w", n, s.base, listwatch.ErrExpired)
				}
				at = n
			}
		}
	}
	items := s.sortedLocked(s.stateAtLocked(at), after, &opts)
	page := listwatch.Page[T]{ResourceVersion: strconv.FormatInt(at, 10)}
	if limit > 0 && int64(len(items)) > limit {
		rest := int64(len(items)) - limit
		items = items[:limit]
		page.Continue = fmt.Sprintf("%d:%s", at, Key(items[limit-1]))
		page.RemainingItemCount = &rest
	}
	page.Items = items
	return page, nil
}

// parseVersionLocked parses a resource version the caller sent.
func (s *Source[T]) parseVersionLocked(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("resource version %q: %w", v, ErrInvalid)
	}
	if n > s.rv {
		return 0, fmt.Errorf("resource version %d, current %d: %w", n, s.rv, listwatch.ErrTooLargeResourceVersion)
	}
	return n, nil
}

func parseToken(tok string) (int64, string, error) {
	v, key, ok := strings.Cut(tok, ":")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil {
		return 0, "", fmt.Errorf("continue token %q: %w", tok, ErrInvalid)
	}
	return n, key, nil
}

// stateAtLocked returns the objects as they were at version at (base <=
// at <= rv) by undoing the logged changes after it. The current map is
// returned as is; callers must not modify the result.
func (s *Source[T]) stateAtLocked(at int64) map[string]T {
	if at >= s.rv {
		return s.objects
	}
	m := make(map[string]T, len(s.objects))
	for k, v := range s.objects {
		m[k] = v
	}
	for i := len(s.log) - 1; i >= 0 && s.log[i].rv > at; i-- {
		c := s.log[i]
		if c.hadPrev {
			m[c.key] = c.prev
		} else {
			delete(m, c.key)
		}
	}
	return m
}

// admit records a call and applies refusals and the caller's hook.
func (s *Source[T]) admit(ctx context.Context, opts listwatch.Options, isWatch bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if isWatch {
		s.calls.watches = append(s.calls.watches, opts)
		s.stats.Watches++
	} else {
		s.calls.lists = append(s.calls.lists, opts)
		s.stats.Lists++
	}
	refuse := false
	if s.refuseNext > 0 {
		s.refuseNext--
		refuse = true
	} else if s.refuseUntilSet && s.clock.Now().UnixNano() < s.refuseUntil {
		refuse = true
	}
	if refuse {
		s.stats.Refused++
	}
	s.mu.Unlock()
	if refuse {
		return fmt.Errorf("dial fake: connection refused: %w", listwatch.ErrUnavailable)
	}
	hook := s.opts.OnList
	if isWatch {
		hook = s.opts.OnWatch
	}
	if hook != nil {
		return hook(opts)
	}
	return nil
}
