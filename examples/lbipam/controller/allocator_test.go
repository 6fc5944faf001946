package controller_test

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/kinformer/kinformer/examples/lbipam/controller"
)

func TestAllocatorHandsOutEachUsableAddressOnce(t *testing.T) {
	a, err := controller.NewAllocator(netip.MustParsePrefix("10.0.0.0/29"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[netip.Addr]bool{}
	for i := range 6 { // .1 to .6: not the network or broadcast address
		addr, err := a.Allocate(fmt.Sprint("svc-", i))
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[addr] || addr == netip.MustParseAddr("10.0.0.0") || addr == netip.MustParseAddr("10.0.0.7") {
			t.Fatalf("allocation %d gave %v (seen %v)", i, addr, seen)
		}
		seen[addr] = true
	}
	if _, err := a.Allocate("one-more"); !errors.Is(err, controller.ErrPoolExhausted) {
		t.Fatalf("allocation past the pool: %v, want ErrPoolExhausted", err)
	}
	again, _ := a.Allocate("svc-3")
	if owner, _ := a.Owner(again); owner != "svc-3" {
		t.Errorf("Allocate of an owner that has an address gave %v, owned by %q", again, owner)
	}
	a.Release("svc-3")
	if got, err := a.Allocate("one-more"); err != nil || got != again {
		t.Errorf("after release: %v, %v; want the released %v", got, err, again)
	}
}

func TestAllocatorClaimKeepsAddressesAndRefusesTakenOnes(t *testing.T) {
	a, _ := controller.NewAllocator(netip.MustParsePrefix("192.0.2.0/24"))
	x := netip.MustParseAddr("192.0.2.50")
	if !a.Claim("a", x) || !a.Claim("a", x) {
		t.Fatal("claim of a free address (and again by its owner) refused")
	}
	if a.Claim("b", x) {
		t.Error("claim of a taken address granted")
	}
	for _, bad := range []string{"192.0.2.0", "192.0.2.255", "203.0.113.1"} {
		if a.Claim("c", netip.MustParseAddr(bad)) {
			t.Errorf("claim of %s granted", bad)
		}
	}
	// Claiming another address moves the owner.
	y := netip.MustParseAddr("192.0.2.60")
	if !a.Claim("a", y) {
		t.Fatal("move refused")
	}
	if _, held := a.Owner(x); held || a.Len() != 1 {
		t.Errorf("old address still held after a move (len %d)", a.Len())
	}
}
