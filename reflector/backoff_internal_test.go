package reflector

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestBackoffDoublesToMaxWithJitterAndResets(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	b := backoff{initial: DefaultBackoffInitial, max: DefaultBackoffMax, reset: DefaultBackoffReset, clock: clk}
	base := DefaultBackoffInitial
	for i := range 10 {
		d := b.delay()
		if d < base || d >= 2*base {
			t.Fatalf("delay %d: %v outside [%v, %v)", i, d, base, 2*base)
		}
		base = min(2*base, DefaultBackoffMax)
		clk.SetTime(clk.Now().Add(d))
	}
	if base != DefaultBackoffMax {
		t.Fatalf("base %v never reached the cap", base)
	}
	clk.SetTime(clk.Now().Add(DefaultBackoffReset + time.Second))
	if d := b.delay(); d >= 2*DefaultBackoffInitial {
		t.Fatalf("after %v of health, delay %v did not start over", DefaultBackoffReset, d)
	}
}
