package cache

import (
	"errors"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpirationStoreTTL(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	s := NewExpirationStore(ExpirationStoreOptions[*obj]{TTL: time.Minute, Clock: clk})
	if err := s.Add(newObj("ns", "a", "1")); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(30 * time.Second))
	if err := s.Add(newObj("ns", "b", "1")); err != nil {
		t.Fatal(err)
	}
	if got := sorted(s.ListKeys()); !slices.Equal(got, []string{"ns/a", "ns/b"}) {
		t.Fatalf("before expiry ListKeys = %v", got)
	}
	clk.SetTime(clk.Now().Add(31 * time.Second)) // a is 61s old, b 31s
	if _, ok, _ := s.GetByKey("ns/a"); ok {
		t.Fatal("expired ns/a still visible")
	}
	if got := names(s.List()); !slices.Equal(got, []string{"ns/b@1"}) {
		t.Fatalf("List = %v, want [ns/b@1]", got)
	}
	if len(s.items) != 1 {
		t.Fatalf("expired entry not evicted: %d entries", len(s.items))
	}
	// Update restamps.
	clk.SetTime(clk.Now().Add(20 * time.Second)) // b 51s old
	if err := s.Update(newObj("ns", "b", "2")); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(50 * time.Second))
	if got, ok, err := s.Get(newObj("ns", "b", "")); err != nil || !ok || got.rv != "2" {
		t.Fatalf("Get(b) = %v, %v, %v; want b@2 alive", got, ok, err)
	}
	if err := s.Delete(newObj("ns", "b", "")); err != nil {
		t.Fatal(err)
	}
	if got := s.ListKeys(); len(got) != 0 {
		t.Fatalf("after delete ListKeys = %v", got)
	}
}

func TestExpirationStorePolicyAndReplace(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	// Objects with rv "short" expire after a second; others never.
	s := NewExpirationStore(ExpirationStoreOptions[*obj]{Clock: clk, Policy: func(o *obj, stored, now time.Time) bool {
		return o.rv == "short" && now.Sub(stored) > time.Second
	}})
	if err := s.Replace([]*obj{newObj("ns", "a", "short"), newObj("ns", "b", "long")}); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(time.Hour))
	if got := sorted(s.ListKeys()); !slices.Equal(got, []string{"ns/b"}) {
		t.Fatalf("ListKeys = %v, want [ns/b]", got)
	}
	var nilObj *obj
	if err := s.Replace([]*obj{newObj("ns", "c", "1"), nilObj}); !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("Replace with nil: %v", err)
	}
	if err := s.Add(nilObj); !errors.Is(err, ErrInvalidObject) {
		t.Fatalf("Add(nil): %v", err)
	}
	if got := s.ListKeys(); !slices.Equal(got, []string{"ns/b"}) {
		t.Fatalf("after failed writes ListKeys = %v, want [ns/b]", got)
	}
}

func TestExpirationStoreZeroTTLNeverExpires(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	s := NewExpirationStore(ExpirationStoreOptions[*obj]{Clock: clk})
	if err := s.Add(newObj("", "a", "1")); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(1000 * time.Hour))
	if _, ok, _ := s.GetByKey("a"); !ok {
		t.Fatal("object expired with zero TTL")
	}
}
