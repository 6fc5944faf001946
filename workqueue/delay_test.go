package workqueue

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// getNow returns the item Get would hand out right now, or "" if none.
func getNow(q *Queue[string]) string {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	item, err := q.Get(ctx)
	if err != nil {
		return ""
	}
	return item
}

func TestAddAfter(t *testing.T) {
	type delayedAdd struct {
		item string
		d    time.Duration
	}
	tests := []struct {
		name string
		adds []delayedAdd
		// want lists, per elapsed time, the items that must have been
		// handed out by then (in order), checked at that exact instant.
		want []struct {
			at    time.Duration
			items []string
		}
	}{
		{
			name: "ItemWaitsForItsDelay",
			adds: []delayedAdd{{"a", time.Second}},
			want: []struct {
				at    time.Duration
				items []string
			}{{999 * time.Millisecond, nil}, {time.Second, []string{"a"}}},
		},
		{
			name: "NonPositiveDelayAddsAtOnce",
			adds: []delayedAdd{{"a", 0}, {"b", -time.Second}},
			want: []struct {
				at    time.Duration
				items []string
			}{{0, []string{"a", "b"}}},
		},
		{
			name: "ItemsComeOutInDueOrder",
			adds: []delayedAdd{{"c", 3 * time.Second}, {"a", time.Second}, {"b", 2 * time.Second}, {"d", 3 * time.Second}},
			want: []struct {
				at    time.Duration
				items []string
			}{{time.Second, []string{"a"}}, {1500 * time.Millisecond, nil}, {2 * time.Second, []string{"b"}}, {3 * time.Second, []string{"c", "d"}}},
		},
		{
			name: "SecondDelayedAddKeepsEarlierTime",
			adds: []delayedAdd{{"a", 5 * time.Second}, {"a", time.Second}, {"a", 10 * time.Second}},
			want: []struct {
				at    time.Duration
				items []string
			}{{time.Second, []string{"a"}}, {10 * time.Second, nil}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New(Options[string]{})
				defer q.ShutDown()
				start := time.Now()
				for _, a := range tt.adds {
					q.AddAfter(a.item, a.d)
				}
				for _, w := range tt.want {
					time.Sleep(start.Add(w.at).Sub(time.Now()))
					synctest.Wait()
					for _, want := range w.items {
						if got := getNow(q); got != want {
							t.Fatalf("at %v: got %q, want %q", w.at, got, want)
						}
						q.Done(want)
					}
					if got := getNow(q); got != "" {
						t.Fatalf("at %v: got unexpected %q", w.at, got)
					}
				}
			})
		})
	}
}

func TestAddAfterOnFakeClock(t *testing.T) {
	fc := clocktesting.NewFakeClock(time.Unix(1000, 0))
	q := New(Options[string]{Clock: fc})
	defer q.ShutDown()
	q.AddAfter("a", time.Minute)
	if got := getNow(q); got != "" {
		t.Fatalf("got %q before the clock moved", got)
	}
	fc.Step(time.Minute)
	// Get blocks until the delay loop sees the new time, whether its timer
	// was set before or after the step.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if got, err := q.Get(ctx); err != nil || got != "a" {
		t.Fatalf("Get = %q, %v; want a", got, err)
	}
}

func TestShutDownDropsDelayedAddsAndStopsLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		q.AddAfter("a", time.Second)
		q.ShutDown() // returns only once the delay loop has exited
		q.AddAfter("b", time.Second)
		q.AddRateLimited("c")
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := q.Len(); n != 0 {
			t.Fatalf("Len() = %d after shutdown, want 0", n)
		}
		if _, err := q.Get(t.Context()); err != ErrShutDown {
			t.Fatalf("Get = %v, want ErrShutDown", err)
		}
	})
}

func TestDelayedAddOfHeldItemWaitsForDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		q.Add("a")
		if got := getNow(q); got != "a" {
			t.Fatalf("got %q", got)
		}
		q.AddAfter("a", time.Second)
		time.Sleep(time.Second)
		synctest.Wait()
		if got := getNow(q); got != "" {
			t.Fatalf("got %q while a is held", got)
		}
		q.Done("a")
		if got := getNow(q); got != "a" {
			t.Fatalf("got %q after Done, want a", got)
		}
	})
}
