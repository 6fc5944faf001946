package replicas

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	fakecoord "k8s.io/client-go/kubernetes/typed/coordination/v1/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/shard"
)

const (
	testLease  = 4 * time.Second
	testRenew  = 500 * time.Millisecond
	testSlots  = 8
	testGroup  = "cms"
	testLeases = "leases"
)

// newLeaseClient is an in-memory coordination.k8s.io/v1 client.
func newLeaseClient() coordinationv1client.CoordinationV1Interface {
	tracker := clienttesting.NewObjectTracker(scheme.Scheme, scheme.Codecs.UniversalDecoder())
	f := &clienttesting.Fake{}
	f.AddReactor("*", "*", clienttesting.ObjectReaction(tracker))
	return &fakecoord.FakeCoordinationV1{Fake: f}
}

// cuttable wraps a Lease client so that a replica can be cut off from the
// server, as by a crash or a partition: every call fails until restored.
type cuttable struct {
	coordinationv1client.CoordinationV1Interface
	cut *atomic.Bool
}

func (c cuttable) Leases(ns string) coordinationv1client.LeaseInterface {
	return cutLeases{c.CoordinationV1Interface.Leases(ns), c.cut}
}

type cutLeases struct {
	coordinationv1client.LeaseInterface
	cut *atomic.Bool
}

var errCut = errors.New("cut off from the server")

func (c cutLeases) List(ctx context.Context, o metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.LeaseInterface.List(ctx, o)
}

func (c cutLeases) Create(ctx context.Context, l *coordinationv1.Lease, o metav1.CreateOptions) (*coordinationv1.Lease, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.LeaseInterface.Create(ctx, l, o)
}

func (c cutLeases) Update(ctx context.Context, l *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.LeaseInterface.Update(ctx, l, o)
}

func (c cutLeases) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	if c.cut.Load() {
		return errCut
	}
	return c.LeaseInterface.Delete(ctx, name, o)
}

// quiet drops the groups' log lines.
var quiet = slog.New(slog.DiscardHandler)

// replica is one member of a test group: a Group with one Informer over
// the world's config maps, and what its handler was told.
type replica struct {
	id     string
	group  *Group
	inf    *Informer[cm]
	notes  *notes
	cut    atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
}

// cluster is a group of replicas over one world and one Lease store.
type cluster struct {
	t      *testing.T
	w      *world
	leases coordinationv1client.CoordinationV1Interface
	mu     sync.Mutex
	errs   []error
	// settle is the SettlePeriod of the replicas started from now on (0:
	// the default).
	settle time.Duration
}

// syncTime is how long every range takes to list in a cluster: less than
// half a Lease duration, so a crashed replica's ranges can be taken over
// before its claims lapse, but long enough for a gap to show.
const syncTime = time.Second

func newCluster(t *testing.T, objects int) *cluster {
	w := newWorld(t, objects)
	w.delay = syncTime
	return &cluster{t: t, w: w, leases: newLeaseClient()}
}

func (c *cluster) report(err error) {
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
}

// start runs a new replica until stop (a graceful leave) or the end of the
// test.
func (c *cluster) start(id string) *replica {
	c.t.Helper()
	r := &replica{id: id, notes: newNotes(), done: make(chan struct{})}
	var err error
	r.inf, err = NewInformer(InformerOptions[cm]{Name: "cms", NewSource: c.w.newSource,
		Informer: informer.Options[cm]{ErrorHandler: c.report}})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := r.inf.AddHandler(r.notes.handler()); err != nil {
		c.t.Fatal(err)
	}
	r.group, err = NewGroup(GroupOptions{Name: testGroup, Namespace: testLeases, Identity: id, Logger: quiet,
		Client: cuttable{c.leases, &r.cut}, Slots: testSlots, LeaseDuration: testLease, RenewPeriod: testRenew,
		SettlePeriod: c.settle,
		ErrorHandler: func(err error) {
			if !errors.Is(err, errCut) {
				c.report(err)
			}
		}})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := r.group.Add(r.inf); err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(c.t.Context())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		if err := r.group.Run(ctx); err != nil {
			c.report(err)
		}
	}()
	c.t.Cleanup(r.stop)
	return r
}

// stop leaves the group and waits for the replica to exit.
func (r *replica) stop() {
	r.cut.Store(false)
	r.cancel()
	<-r.done
}

// claims reads every Lease of the group and returns, for each slot, the
// identities whose claim on it stands now (renewed within its duration,
// by the Lease's own renewTime): what a checker outside the replicas sees.
func (c *cluster) claims() [][]string {
	c.t.Helper()
	list, err := c.leases.Leases(testLeases).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	out := make([][]string, testSlots)
	now := time.Now()
	for _, l := range list.Items {
		if l.Spec.RenewTime == nil || now.Sub(l.Spec.RenewTime.Time) >= time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second {
			continue
		}
		slots, err := parseRanges(l.Annotations[RangesAnnotation], testSlots)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, s := range slots {
			out[s] = append(out[s], *l.Spec.HolderIdentity)
		}
	}
	return out
}

// converged reports whether the live replicas own exactly their split,
// once each, and every valid claim agrees.
func (c *cluster) converged(live ...*replica) (bool, string) {
	var ids []string
	for _, r := range live {
		ids = append(ids, r.id)
	}
	owner := Assign(ids, testSlots)
	claims := c.claims()
	for s := range testSlots {
		if !slices.Equal(claims[s], []string{owner[s]}) {
			return false, fmt.Sprintf("slot %d claimed by %v, assigned to %s", s, claims[s], owner[s])
		}
	}
	for _, r := range live {
		st := r.group.Status()
		if !slices.Equal(st.Owned, st.Assigned) || len(st.Members) != len(live) {
			return false, fmt.Sprintf("%s: owns %v, assigned %v, members %v", r.id, st.Owned, st.Assigned, st.Members)
		}
	}
	return true, ""
}

// await advances the bubble's clock in small steps until cond holds,
// checking at every step that every slot has a standing claim (once
// ready is true). It fails after a minute of fake time.
func (c *cluster) await(what string, gapFree bool, cond func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		synctest.Wait()
		if gapFree {
			for s, ids := range c.claims() {
				if len(ids) == 0 {
					c.t.Fatalf("%s: slot %d has no owner at %s", what, s, time.Now().Format(time.StampMilli))
				}
			}
		}
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not reached: %s", what, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ownedNames returns the names every live replica caches, and fails on a
// name cached twice.
func (c *cluster) ownedNames(live ...*replica) []string {
	c.t.Helper()
	var all []string
	for _, r := range live {
		all = append(all, cachedNames(r.inf)...)
	}
	slices.Sort(all)
	if d := slices.Compact(slices.Clone(all)); len(d) != len(all) {
		c.t.Errorf("%d objects cached twice", len(all)-len(d))
	}
	return all
}

func (c *cluster) checkNoErrors() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, err := range c.errs {
		c.t.Errorf("reported: %v", err)
	}
}

func allNames(w *world) []string { return w.inRanges(shard.Range{}) }

// Three replicas split the ranges between them; a fourth joins, gainer
// first: at every step of fake time every range has a standing claim; the
// objects that moved are released by one and acquired by the other, and
// none is added or deleted.
func TestGroupSplitsTheRangesAndHandsThemOverGainerFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 300)
		a, b, d := c.start("a"), c.start("b"), c.start("d")
		c.await("three replicas converge", false, func() (bool, string) { return c.converged(a, b, d) })
		if got, want := c.ownedNames(a, b, d), allNames(c.w); !slices.Equal(got, want) {
			t.Fatalf("the replicas cache %d objects, the world has %d", len(got), len(want))
		}
		for _, r := range []*replica{a, b, d} {
			r.notes.take()
		}

		e := c.start("e")
		c.await("a fourth replica joins", true, func() (bool, string) { return c.converged(a, b, d, e) })
		if got, want := c.ownedNames(a, b, d, e), allNames(c.w); !slices.Equal(got, want) {
			t.Fatalf("the replicas cache %d objects, the world has %d", len(got), len(want))
		}
		acquired, released := 0, 0
		for _, r := range []*replica{a, b, d, e} {
			n := r.notes.take()
			if len(n["add"])+len(n["delete"])+len(n["update"]) > 0 {
				t.Errorf("%s was told of adds, updates or deletes: %v", r.id, n)
			}
			acquired += len(n["acquire"])
			released += len(n["release"])
		}
		// Every object that moved was released by one replica and acquired
		// by another; the split may also move a range or two between the
		// others (see TestAssignMovesLittle).
		if acquired != released || acquired < len(cachedNames(e.inf)) {
			t.Errorf("acquired %d, released %d, the joiner caches %d", acquired, released, len(cachedNames(e.inf)))
		}
		c.checkNoErrors()
	})
}

// Replicas that start into an empty group within its settle period of
// one another split from the start: none ever acquires, let alone lists,
// more than its share, as the first one would if it split alone.
func TestGroupStartedTogetherSplitsFromTheStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 300)
		c.settle = 3 * time.Second // > the spread of the starts, 1 s apart
		share := (testSlots + 2) / 3
		var live []*replica
		check := func() {
			for _, r := range live {
				held := 0
				for _, rg := range r.group.Ranges() {
					if r.inf.holds(rg) {
						held++
					}
				}
				if held > share {
					t.Fatalf("%s holds %d of %d ranges at %s, more than its share of three (%d)",
						r.id, held, testSlots, time.Now().Format(time.StampMilli), share)
				}
			}
		}
		for _, id := range []string{"a", "b", "d"} {
			live = append(live, c.start(id))
			for range 20 { // a second
				synctest.Wait()
				check()
				time.Sleep(50 * time.Millisecond)
			}
		}
		c.await("three replicas converge", false, func() (bool, string) {
			check()
			return c.converged(live...)
		})
		if got, want := c.ownedNames(live...), allNames(c.w); !slices.Equal(got, want) {
			t.Fatalf("the replicas cache %d objects, the world has %d", len(got), len(want))
		}
		c.checkNoErrors()
	})
}

// A replica that joins a running group (a member claims ranges) takes its
// share without waiting for its settle period: here an hour, longer than
// await allows.
func TestGroupJoinsARunningGroupWithoutSettling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 100)
		a, b := c.start("a"), c.start("b")
		c.await("two replicas converge", false, func() (bool, string) { return c.converged(a, b) })
		c.settle = time.Hour
		e := c.start("e")
		c.await("e joins", true, func() (bool, string) { return c.converged(a, b, e) })
		if got, want := c.ownedNames(a, b, e), allNames(c.w); !slices.Equal(got, want) {
			t.Fatalf("the replicas cache %d objects, the world has %d", len(got), len(want))
		}
		c.checkNoErrors()
	})
}

// A replica cut off from the server (a crash, to the others) has its
// ranges taken over before its claims lapse: every range has a standing
// claim at every step. It stops claiming ownership itself once it could
// not renew for a Lease duration.
func TestGroupTakesOverASilentReplicaWithoutAGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 200)
		a, b, d := c.start("a"), c.start("b"), c.start("d")
		c.await("three replicas converge", false, func() (bool, string) { return c.converged(a, b, d) })
		someOfD := d.inf.Cache().List()[0]
		d.cut.Store(true)
		cutAt := time.Now()
		c.await("a and b take d's ranges", true, func() (bool, string) { return c.converged(a, b) })
		if got, want := c.ownedNames(a, b), allNames(c.w); !slices.Equal(got, want) {
			t.Fatalf("a and b cache %d objects, the world has %d", len(got), len(want))
		}
		for time.Since(cutAt) < testLease {
			time.Sleep(100 * time.Millisecond)
		}
		synctest.Wait()
		if d.inf.Owns(someOfD) {
			t.Errorf("d still claims %s a Lease duration after its last renewal", someOfD.Name)
		}
		c.checkNoErrors()
	})
}

// A replica that stops leaves gap-free: the others claim its ranges before
// it releases them, and its Lease is gone.
func TestGroupLeavesGapFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 100)
		a, b := c.start("a"), c.start("b")
		c.await("two replicas converge", false, func() (bool, string) { return c.converged(a, b) })
		stopped := make(chan struct{})
		go func() { b.stop(); close(stopped) }()
		c.await("a takes everything", true, func() (bool, string) {
			select {
			case <-stopped:
				return c.converged(a)
			default:
				return false, "b has not stopped"
			}
		})
		list, err := c.leases.Leases(testLeases).List(context.Background(), metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			t.Errorf("Leases after b left: %d, %v", len(list.Items), err)
		}
		if n := b.notes.take(); len(n["release"]) == 0 {
			t.Errorf("b released nothing when leaving: %v", n)
		}
		c.checkNoErrors()
	})
}

// Slots past shard.MaxSplit is an error, not a panic or a slice sized by
// the option.
func TestNewGroupRefusesMoreSlotsThanMaxSplit(t *testing.T) {
	for _, slots := range []int{-1, shard.MaxSplit + 1, math.MaxInt} {
		_, err := NewGroup(GroupOptions{Name: testGroup, Namespace: testLeases, Identity: "a", Client: newLeaseClient(), Slots: slots})
		if err == nil {
			t.Errorf("Slots %d accepted", slots)
		}
	}
}

// Synced is open until the replica owns and claims its whole share, then
// closed, and stays closed when the split changes.
func TestGroupSyncedClosesOnceTheShareIsOwned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 40)
		a := c.start("a")
		synctest.Wait()
		select {
		case <-a.group.Synced():
			t.Fatal("Synced closed before a owns anything")
		default:
		}
		c.await("a converges", false, func() (bool, string) { return c.converged(a) })
		select {
		case <-a.group.Synced():
		default:
			t.Fatal("a owns its share, Synced is still open")
		}
		b := c.start("b")
		c.await("a and b converge", false, func() (bool, string) { return c.converged(a, b) })
		for _, r := range []*replica{a, b} {
			select {
			case <-r.group.Synced():
			default:
				t.Fatalf("%s owns its share, Synced is still open", r.id)
			}
		}
		c.checkNoErrors()
	})
}
