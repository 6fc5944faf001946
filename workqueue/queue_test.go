package workqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// step is one operation of a table test. Gets never block: they run with a
// cancelled context, so a Get that would wait reports context.Canceled.
type step struct {
	op      string // "add", "get", "done", "len", "shutdown"
	item    string // item to add or mark done; item a get expects
	n       int    // length a len step expects
	wantErr error  // error a get expects (item is ignored then)
}

func add(item string) step            { return step{op: "add", item: item} }
func get(item string) step            { return step{op: "get", item: item} }
func getErr(err error) step           { return step{op: "get", wantErr: err} }
func done(item string) step           { return step{op: "done", item: item} }
func length(n int) step               { return step{op: "len", n: n} }
func shutdown() step                  { return step{op: "shutdown"} }
func runSteps(t *testing.T, s []step) { t.Helper(); runStepsOn(t, New(Options[string]{}), s) }

func runStepsOn(t *testing.T, q *Queue[string], steps []step) {
	t.Helper()
	defer q.ShutDown()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i, s := range steps {
		where := fmt.Sprintf("step %d (%s %q)", i, s.op, s.item)
		switch s.op {
		case "add":
			if s.wantErr == errPriority {
				q.AddWithOptions(s.item, AddOptions{Priority: s.n})
			} else {
				q.Add(s.item)
			}
		case "done":
			q.Done(s.item)
		case "shutdown":
			q.ShutDown()
		case "len":
			if got := q.Len(); got != s.n {
				t.Fatalf("%s: Len() = %d, want %d", where, got, s.n)
			}
		case "get":
			got, err := q.Get(cancelled)
			if s.wantErr != nil {
				if !errors.Is(err, s.wantErr) {
					t.Fatalf("%s: Get() = %q, %v; want error %v", where, got, err, s.wantErr)
				}
				continue
			}
			if err != nil || got != s.item {
				t.Fatalf("%s: Get() = %q, %v; want %q", where, got, err, s.item)
			}
		default:
			t.Fatalf("%s: unknown op", where)
		}
	}
}

func TestQueueGuarantees(t *testing.T) {
	empty := getErr(context.Canceled) // nothing to hand out right now
	tests := []struct {
		name  string
		steps []step
	}{
		{"AddDeduplicatesWaitingItems", []step{
			add("a"), add("a"), add("b"), add("a"), length(2),
			get("a"), get("b"), empty, length(0),
		}},
		{"GetHandsOutInFirstAddOrder", []step{
			add("c"), add("a"), add("b"), add("c"),
			get("c"), get("a"), get("b"), empty,
		}},
		{"ItemHeldByWorkerIsNotHandedOutAgain", []step{
			add("a"), get("a"), add("a"), length(1), empty,
		}},
		{"ItemAddedWhileHeldIsHandedOutAfterDone", []step{
			add("a"), get("a"), add("a"), add("a"), add("b"),
			get("b"), empty, done("a"), length(1), get("a"), empty,
		}},
		{"ItemReaddedWhileHeldGoesToTheBackOfTheLine", []step{
			add("a"), get("a"), add("a"), add("b"), done("a"),
			get("b"), get("a"),
		}},
		{"DoneWithoutReaddForgetsItem", []step{
			add("a"), get("a"), done("a"), empty, length(0), add("a"), get("a"),
		}},
		{"DoneOfItemNotHeldDoesNothing", []step{
			done("x"), add("a"), done("a"), length(1), get("a"), done("a"), done("a"), empty,
		}},
		{"ShutDownIgnoresLaterAddsButHandsOutWaitingItems", []step{
			add("a"), add("b"), shutdown(), add("c"), length(2),
			get("a"), get("b"), getErr(ErrShutDown),
		}},
		{"ShutDownStillHandsOutItemReaddedWhileHeld", []step{
			add("a"), get("a"), add("a"), shutdown(),
			empty, done("a"), get("a"), done("a"), getErr(ErrShutDown),
		}},
		{"ShutDownTwiceIsHarmless", []step{
			shutdown(), shutdown(), getErr(ErrShutDown),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSteps(t, tt.steps) })
	}
}

// getAsync runs Get in a goroutine and returns a channel with its result.
func getAsync(ctx context.Context, q *Queue[string]) <-chan result {
	ch := make(chan result, 1)
	go func() {
		item, err := q.Get(ctx)
		ch <- result{item, err}
	}()
	return ch
}

type result struct {
	item string
	err  error
}

// mustBlock fails if ch already has a result once every goroutine of the
// bubble is blocked.
func mustBlock(t *testing.T, ch <-chan result) {
	t.Helper()
	synctest.Wait()
	select {
	case r := <-ch:
		t.Fatalf("Get returned %q, %v; want it to block", r.item, r.err)
	default:
	}
}

func mustGet(t *testing.T, ch <-chan result, want string, wantErr error) {
	t.Helper()
	synctest.Wait()
	select {
	case r := <-ch:
		if wantErr != nil {
			if !errors.Is(r.err, wantErr) {
				t.Fatalf("Get = %q, %v; want error %v", r.item, r.err, wantErr)
			}
			return
		}
		if r.err != nil || r.item != want {
			t.Fatalf("Get = %q, %v; want %q", r.item, r.err, want)
		}
	default:
		t.Fatalf("Get still blocked; want %q, %v", want, wantErr)
	}
}

func TestGetBlocksUntilAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		first, second := getAsync(t.Context(), q), (<-chan result)(nil)
		synctest.Wait()
		second = getAsync(t.Context(), q)
		mustBlock(t, first)
		mustBlock(t, second)
		q.Add("a")
		mustGet(t, first, "a", nil) // blocked Gets are served oldest first
		mustBlock(t, second)
		q.Add("a") // held by the first worker: must not reach the second
		mustBlock(t, second)
		q.Done("a")
		mustGet(t, second, "a", nil)
	})
}

func TestGetReturnsContextErrorOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		ctx, cancel := context.WithCancel(t.Context())
		ch := getAsync(ctx, q)
		mustBlock(t, ch)
		cancel()
		mustGet(t, ch, "", context.Canceled)
		// The abandoned Get must not swallow the next item.
		q.Add("a")
		mustGet(t, getAsync(t.Context(), q), "a", nil)
	})
}

func TestShutDownReleasesBlockedGets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		a, b := getAsync(t.Context(), q), getAsync(t.Context(), q)
		mustBlock(t, a)
		mustBlock(t, b)
		q.ShutDown()
		mustGet(t, a, "", ErrShutDown)
		mustGet(t, b, "", ErrShutDown)
		if !q.ShuttingDown() {
			t.Fatal("ShuttingDown() = false after ShutDown")
		}
	})
}

func TestShutDownKeepsBlockedGetForItemReaddedWhileHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		q.Add("a")
		mustGet(t, getAsync(t.Context(), q), "a", nil)
		q.Add("a")
		waiting, other := getAsync(t.Context(), q), (<-chan result)(nil)
		synctest.Wait()
		other = getAsync(t.Context(), q)
		q.ShutDown()
		mustBlock(t, waiting) // "a" still has to be processed again
		mustBlock(t, other)
		q.Done("a")
		mustGet(t, waiting, "a", nil)
		mustGet(t, other, "", ErrShutDown) // nothing else can come
		q.Done("a")
	})
}

func TestShutDownWithDrainWaitsForDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		q.Add("a")
		q.Add("b")
		item, err := q.Get(t.Context())
		if err != nil || item != "a" {
			t.Fatalf("Get = %q, %v", item, err)
		}
		drained := make(chan error, 1)
		go func() { drained <- q.ShutDownWithDrain(t.Context()) }()
		synctest.Wait()
		steps := []func(){
			func() { q.Done("a") },
			func() {
				if b, _ := q.Get(t.Context()); b != "b" {
					t.Errorf("Get = %q, want b", b)
				}
			},
		}
		for _, s := range steps {
			select {
			case err := <-drained:
				t.Fatalf("ShutDownWithDrain returned %v before the queue drained", err)
			default:
			}
			s()
			synctest.Wait()
		}
		select {
		case err := <-drained:
			t.Fatalf("ShutDownWithDrain returned %v while b is held", err)
		default:
		}
		q.Done("b")
		synctest.Wait()
		select {
		case err := <-drained:
			if err != nil {
				t.Fatalf("ShutDownWithDrain = %v", err)
			}
		default:
			t.Fatal("ShutDownWithDrain still waiting after the last Done")
		}
	})
}

func TestShutDownWithDrainReturnsContextError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		q.Add("a")
		ctx, cancel := context.WithCancel(t.Context())
		drained := make(chan error, 1)
		go func() { drained <- q.ShutDownWithDrain(ctx) }()
		synctest.Wait()
		cancel()
		if err := <-drained; !errors.Is(err, context.Canceled) {
			t.Fatalf("ShutDownWithDrain = %v, want context.Canceled", err)
		}
	})
}

func TestAddGetDoneDoNotAllocate(t *testing.T) {
	q := New(Options[int]{})
	defer q.ShutDown()
	ctx := context.Background()
	cycle := func() {
		for i := range 64 {
			q.Add(i)
		}
		for range 64 {
			item, _ := q.Get(ctx)
			q.Add(item) // re-add while held
			q.Done(item)
		}
		for range 64 {
			item, _ := q.Get(ctx)
			q.Done(item)
		}
	}
	cycle() // warm up the maps and the ring
	if allocs := testing.AllocsPerRun(20, cycle); allocs > 0 {
		t.Fatalf("%v allocations per cycle of 64 items, want 0", allocs)
	}
}

func TestTableMemoryIsReleasedAfterBurstDrains(t *testing.T) {
	q := New(Options[int]{})
	defer q.ShutDown()
	ctx := context.Background()
	const burst = 100 * tableShrinkMin
	for i := range burst {
		q.Add(i)
	}
	q.Len() // applies the intake
	if len(q.items.slots) < 2*burst {
		t.Fatalf("%d slots for %d items", len(q.items.slots), burst)
	}
	for range burst - 10 {
		item, err := q.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		q.Done(item)
	}
	// The queue keeps working with a few items: the memory goes within a
	// few hundred thousand operations (see hiwater).
	for i := range 6 * hiwaterDecay {
		q.Add(burst + i)
		item, _ := q.Get(ctx)
		q.Done(item)
	}
	if n := len(q.items.slots); n > tableShrinkMin {
		t.Fatalf("%d slots left for 10 items, want at most %d", n, tableShrinkMin)
	}
	for range 10 {
		item, _ := q.Get(ctx)
		q.Done(item)
	}
	q.Len() // applies the last Done
	if q.items.chunks != nil || q.items.free != nil {
		t.Fatalf("arena kept after the burst drained: %d entries, %d free", q.items.size, len(q.items.free))
	}
}

// TestTableKeepsMemoryWhileRefilling fills and drains a queue again and
// again, as an informer's resync does: its table must not be freed and
// reallocated every round.
func TestTableKeepsMemoryWhileRefilling(t *testing.T) {
	q := New(Options[int]{})
	defer q.ShutDown()
	ctx := context.Background()
	var slots *slot
	var chunk *[arenaChunk]entry[int]
	for round := range 8 {
		for i := range 10 * tableShrinkMin {
			q.Add(i)
		}
		q.Len() // applies the intake
		if round == 0 {
			slots, chunk = &q.items.slots[0], q.items.chunks[0]
		} else if &q.items.slots[0] != slots || q.items.chunks[0] != chunk {
			t.Fatalf("round %d: the table was reallocated", round)
		}
		for range 10 * tableShrinkMin {
			item, _ := q.Get(ctx)
			q.Done(item)
		}
	}
}

// addAt is an add at priority p.
func addAt(item string, p int) step { return step{op: "add", item: item, n: p, wantErr: errPriority} }

// errPriority marks an add step that carries a priority in n.
var errPriority = errors.New("priority")

func TestQueuePriorities(t *testing.T) {
	const low, high = PriorityLow, 5
	empty := getErr(context.Canceled)
	tests := []struct {
		name  string
		steps []step
	}{
		{"HigherPriorityFirstThenFIFO", []step{
			addAt("l1", low), add("n1"), addAt("l2", low), addAt("h1", high), add("n2"),
			get("h1"), get("n1"), get("n2"), get("l1"), get("l2"), empty,
		}},
		{"RaiseMovesBehindItemsAtNewPriority", []step{
			addAt("l1", low), addAt("l2", low), add("n1"), add("l2"), length(3),
			get("n1"), get("l2"), get("l1"), empty,
		}},
		{"LowerOrEqualAddChangesNothing", []step{
			add("a"), add("b"), addAt("a", low), add("a"), length(2),
			get("a"), get("b"), empty,
		}},
		{"RaisedTwiceLeavesNoTrace", []step{
			addAt("a", low), addAt("b", low), add("a"), addAt("a", high), add("b"),
			get("a"), get("b"), empty, length(0),
			addAt("c", low), get("c"), empty,
		}},
		{"ItemAddedWhileHeldRejoinsAtThatAddsPriority", []step{
			add("a"), get("a"), addAt("a", low), add("b"), done("a"),
			get("b"), get("a"), empty,
		}},
		{"ItemAddedWhileHeldIsRaisedByLaterAdd", []step{
			addAt("a", low), get("a"), addAt("a", low), add("a"), add("b"), done("a"),
			get("b"), get("a"), empty,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSteps(t, tt.steps) })
	}
}

func TestRetriesKeepTheirPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: NewExponential[string](ExponentialOptions{Base: time.Second})})
		defer q.ShutDown()
		q.AddWithOptions("initial", AddOptions{Priority: PriorityLow})
		q.AddWithOptions("other", AddOptions{Priority: PriorityLow})
		if got := getNow(q); got != "initial" {
			t.Fatalf("got %q", got)
		}
		q.AddRateLimited("initial") // fails: retried at its own priority
		q.Done("initial")
		q.AddWithOptions("late", AddOptions{Priority: PriorityLow})
		time.Sleep(time.Second)
		synctest.Wait()
		// "initial" is back behind "other", at low priority, not ahead
		// of it at normal.
		if got := []string{getNow(q), getNow(q), getNow(q)}; !slices.Equal(got, []string{"other", "late", "initial"}) {
			t.Fatalf("handed out %v", got)
		}
		q.AddAfter("new", time.Second) // not held: normal
		time.Sleep(time.Second)
		synctest.Wait()
		q.AddWithOptions("low", AddOptions{Priority: PriorityLow})
		if got := getNow(q); got != "new" {
			t.Fatalf("got %q, want new", got)
		}
	})
}
