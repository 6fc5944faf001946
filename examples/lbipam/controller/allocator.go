package controller

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
)

// ErrPoolExhausted is returned by Allocate when every address of the pool
// is taken.
var ErrPoolExhausted = errors.New("address pool exhausted")

// Allocator hands out the addresses of an IPv4 or IPv6 prefix, one per
// owner (a Service's namespace/name key). The network and broadcast
// addresses of an IPv4 prefix shorter than /31 are never handed out. It is
// safe for concurrent use; the zero value is not usable (NewAllocator).
type Allocator struct {
	pool netip.Prefix

	// mu guards the maps, which mirror each other.
	mu      sync.Mutex
	byAddr  map[netip.Addr]string
	byOwner map[string]netip.Addr
}

// NewAllocator returns an allocator of the addresses in pool.
func NewAllocator(pool netip.Prefix) (*Allocator, error) {
	if !pool.IsValid() {
		return nil, fmt.Errorf("invalid address pool %v", pool)
	}
	return &Allocator{pool: pool.Masked(), byAddr: map[netip.Addr]string{}, byOwner: map[string]netip.Addr{}}, nil
}

// Contains reports whether addr is in the pool.
func (a *Allocator) Contains(addr netip.Addr) bool { return a.usable(addr) }

func (a *Allocator) usable(addr netip.Addr) bool {
	if !a.pool.Contains(addr) {
		return false
	}
	if addr.Is4() && a.pool.Bits() < 31 {
		first := a.pool.Addr()
		if addr == first || addr == lastAddr(a.pool) {
			return false
		}
	}
	return true
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	last, _ := netip.AddrFromSlice(b)
	return last
}

// Claim gives addr to owner if it is in the pool and free (or already
// owner's), releasing any other address owner had, and reports whether it
// did. It is how addresses already written in Services are kept across
// restarts.
func (a *Allocator) Claim(owner string, addr netip.Addr) bool {
	if !a.usable(addr) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if o, taken := a.byAddr[addr]; taken {
		return o == owner
	}
	a.releaseLocked(owner)
	a.byAddr[addr] = owner
	a.byOwner[owner] = addr
	return true
}

// Allocate returns owner's address, taking the lowest free one if owner has
// none.
func (a *Allocator) Allocate(owner string) (netip.Addr, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if addr, ok := a.byOwner[owner]; ok {
		return addr, nil
	}
	for addr := a.pool.Addr(); a.pool.Contains(addr); addr = addr.Next() {
		if _, taken := a.byAddr[addr]; taken || !a.usable(addr) {
			continue
		}
		a.byAddr[addr] = owner
		a.byOwner[owner] = addr
		return addr, nil
	}
	return netip.Addr{}, fmt.Errorf("%w: %v", ErrPoolExhausted, a.pool)
}

// Release frees owner's address, if it has one.
func (a *Allocator) Release(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releaseLocked(owner)
}

func (a *Allocator) releaseLocked(owner string) {
	if addr, ok := a.byOwner[owner]; ok {
		delete(a.byOwner, owner)
		delete(a.byAddr, addr)
	}
}

// Owner returns who holds addr, if anyone.
func (a *Allocator) Owner(addr netip.Addr) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, ok := a.byAddr[addr]
	return o, ok
}

// Len is the number of addresses handed out.
func (a *Allocator) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byAddr)
}

// byOwnerAddr returns owner's address, if it has one.
func (a *Allocator) byOwnerAddr(owner string) (netip.Addr, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	addr, ok := a.byOwner[owner]
	return addr, ok
}
