package cache

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// ExpirationPolicy decides whether an object stored at time stored has
// expired at time now.
type ExpirationPolicy[T Object] func(obj T, stored, now time.Time) bool

// TTLPolicy returns the policy under which an object expires once more
// than ttl has passed since it was stored. A ttl of zero or less never
// expires anything.
func TTLPolicy[T Object](ttl time.Duration) ExpirationPolicy[T] {
	return func(_ T, stored, now time.Time) bool {
		return ttl > 0 && now.Sub(stored) > ttl
	}
}

// ExpirationStoreOptions configures NewExpirationStore.
type ExpirationStoreOptions[T Object] struct {
	// KeyFunc computes the key of each object. Default MetaNamespaceKey.
	KeyFunc KeyFunc[T]
	// TTL is how long an object lives after it was last stored, when
	// Policy is nil. Zero means forever.
	TTL time.Duration
	// Policy, when set, decides expiry instead of TTL.
	Policy ExpirationPolicy[T]
	// Clock tells the time. Default clock.RealClock{}.
	Clock clock.PassiveClock
}

// ExpirationStore is a Store whose objects expire. An expired object is
// invisible to every read, and is removed by the read that finds it;
// nothing runs in the background. Writing an object (Add, Update, Replace)
// stamps it with the current time.
//
// It is safe for concurrent use. Objects returned are shared and must not
// be mutated. The zero ExpirationStore is not usable: create one with
// NewExpirationStore.
type ExpirationStore[T Object] struct {
	// Set by NewExpirationStore, then read-only.
	keyFunc KeyFunc[T]
	policy  ExpirationPolicy[T]
	clock   clock.PassiveClock

	mu    sync.Mutex // guards items
	items map[string]stamped[T]
}

type stamped[T Object] struct {
	obj    T
	stored time.Time
}

var _ Store[Object] = (*ExpirationStore[Object])(nil)

// NewExpirationStore returns an empty ExpirationStore.
func NewExpirationStore[T Object](opts ExpirationStoreOptions[T]) *ExpirationStore[T] {
	s := &ExpirationStore[T]{
		keyFunc: opts.KeyFunc,
		policy:  opts.Policy,
		clock:   opts.Clock,
		items:   make(map[string]stamped[T]),
	}
	if s.keyFunc == nil {
		s.keyFunc = MetaNamespaceKey[T]
	}
	if s.policy == nil {
		s.policy = TTLPolicy[T](opts.TTL)
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	return s
}

func (s *ExpirationStore[T]) keyOf(op string, obj T) (string, error) {
	if isNil(obj) {
		return "", fmt.Errorf("cache: %s: %w: nil %T", op, ErrInvalidObject, obj)
	}
	key, err := s.keyFunc(obj)
	if err != nil {
		return "", keyFuncError(op, err)
	}
	return key, nil
}

// Add stores obj, stamped with the current time.
func (s *ExpirationStore[T]) Add(obj T) error {
	key, err := s.keyOf("add", obj)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	s.mu.Lock()
	s.items[key] = stamped[T]{obj: obj, stored: now}
	s.mu.Unlock()
	return nil
}

// Update is the same as Add.
func (s *ExpirationStore[T]) Update(obj T) error { return s.Add(obj) }

// Delete removes obj's key.
func (s *ExpirationStore[T]) Delete(obj T) error {
	key, err := s.keyOf("delete", obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.items, key)
	s.mu.Unlock()
	return nil
}

// Replace swaps the content for items, all stamped with the current time.
// If any item cannot be keyed, it returns the error and changes nothing.
func (s *ExpirationStore[T]) Replace(items []T) error {
	now := s.clock.Now()
	m := make(map[string]stamped[T], len(items))
	for _, obj := range items {
		key, err := s.keyOf("replace", obj)
		if err != nil {
			return err
		}
		m[key] = stamped[T]{obj: obj, stored: now}
	}
	s.mu.Lock()
	s.items = m
	s.mu.Unlock()
	return nil
}

// getLocked returns the live object under key, removing it if expired.
func (s *ExpirationStore[T]) getLocked(key string, now time.Time) (T, bool) {
	e, ok := s.items[key]
	if !ok {
		var zero T
		return zero, false
	}
	if s.policy(e.obj, e.stored, now) {
		delete(s.items, key)
		var zero T
		return zero, false
	}
	return e.obj, true
}

// Get returns the live object under obj's key.
func (s *ExpirationStore[T]) Get(obj T) (item T, exists bool, err error) {
	key, err := s.keyOf("get", obj)
	if err != nil {
		return item, false, err
	}
	return s.GetByKey(key)
}

// GetByKey returns the live object under key.
func (s *ExpirationStore[T]) GetByKey(key string) (item T, exists bool, err error) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	item, exists = s.getLocked(key, now)
	return item, exists, nil
}

// List returns the live objects, removing the expired ones.
func (s *ExpirationStore[T]) List() []T {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]T, 0, len(s.items))
	for key := range s.items {
		if obj, ok := s.getLocked(key, now); ok {
			out = append(out, obj)
		}
	}
	return out
}

// ListKeys returns the keys of the live objects, removing the expired ones.
func (s *ExpirationStore[T]) ListKeys() []string {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.items))
	for key := range s.items {
		if _, ok := s.getLocked(key, now); ok {
			out = append(out, key)
		}
	}
	return out
}
