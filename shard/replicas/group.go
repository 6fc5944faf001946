package replicas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/metrics"
	"github.com/kinformer/kinformer/shard"
)

// Defaults of GroupOptions.
const (
	DefaultSlots         = 16
	DefaultLeaseDuration = 15 * time.Second
)

// GroupOptions configure NewGroup. Name, Namespace and Client are
// required.
type GroupOptions struct {
	// Name names the group: its Leases carry it in GroupLabel and start
	// with it. It must be a valid label value and DNS label.
	Name string
	// Namespace holds the group's Leases.
	Namespace string
	// Client reads and writes the Leases: a clientset's CoordinationV1(),
	// or coordinationv1client.NewForConfig's.
	Client coordinationv1client.CoordinationV1Interface
	// Identity names this replica; it must be unique in the group.
	// Default: the host name and a random suffix.
	Identity string
	// Slots is the number of equal ranges the hash space is cut into: the
	// unit of assignment and handoff. Every member must use the same.
	// More slots balance better, but each owned range is one watch.
	// At most shard.MaxSplit. Default DefaultSlots.
	Slots int
	// LeaseDuration is how long a Lease stands without renewal (written in
	// the Lease rounded up to whole seconds). A silent member is left out
	// of the split after half of it. Default DefaultLeaseDuration.
	LeaseDuration time.Duration
	// RenewPeriod is how often the replica renews its Lease. Default a
	// fifth of LeaseDuration.
	RenewPeriod time.Duration
	// PollPeriod is how often the replica reads the group's Leases: the
	// bound on how long a handoff keeps two owners. Default RenewPeriod.
	PollPeriod time.Duration
	// SettlePeriod is how long a replica that starts into a group where no
	// member claims a range yet (the group is starting) waits, from the
	// start of Run, before it takes ranges: replicas that start within it
	// of each other split from the start, rather than the first taking
	// every range, listing them all and handing most of them over moments
	// later (a peak of memory and of load on the server that a replica
	// sized for its share may not survive). Raise it when the replicas of
	// a group start further apart (image pulls, scheduling). A replica
	// that finds a member claiming ranges (the group runs) takes its share
	// at once: joining a running group moves ranges gainer first, with no
	// such peak. The wait is at least one PollPeriod. Default PollPeriod.
	SettlePeriod time.Duration
	// Clock drives renewals, polls and liveness. Default the real clock.
	Clock clock.WithTicker
	// Metrics, when set, receives the replica's measurements
	// (NewReplicaMetrics, with Name).
	Metrics metrics.ShardProvider
	// Logger receives a line for each change of members and each range
	// acquired or released. Default slog.Default().
	Logger *slog.Logger
	// ErrorHandler receives failed Lease reads and writes and failed range
	// changes, which are retried at the next poll. Default: Logger at
	// level Error.
	ErrorHandler func(error)
}

// RangeOwner is what a Group hands ranges to: an Informer. Its methods are
// the Group's business.
type RangeOwner interface {
	Name() string
	objects() int
	Run(ctx context.Context) error
	acquire(ctx context.Context, r shard.Range) error
	release(ctx context.Context, r shard.Range) error
	isOwned(r shard.Range) bool
	holds(r shard.Range) bool
	attach(fence func() bool, notify func())
}

// Status is what a replica knows of its group at one moment.
type Status struct {
	Identity string
	// Slots is the number of ranges; range i is shard.Split(Slots)[i].
	Slots int
	// Members are the members of the split, sorted.
	Members []string
	// Assigned are the ranges the split gives this replica; Owned those it
	// owns (synced in every RangeOwner) and claims in its Lease.
	Assigned, Owned []int
	// Claims are the ranges each valid Lease of the group claims, by
	// identity, this replica's included.
	Claims map[string][]int
	// Objects is the number of objects cached in the owned ranges.
	Objects int
}

// Group is one replica's membership in a group of replicas sharing
// resources by hash range (see the package documentation for the
// protocol). It runs the RangeOwners added to it and hands them the
// ranges this replica owns. Create it with NewGroup, add informers with
// Add, then Run it.
type Group struct {
	// Set by NewGroup, then read-only.
	opts   GroupOptions
	leases interface {
		List(ctx context.Context, opts metav1.ListOptions) (*coordinationv1.LeaseList, error)
		Create(ctx context.Context, l *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error)
		Update(ctx context.Context, l *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error)
		Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	}
	ranges []shard.Range
	m      metrics.ReplicaMetrics
	log    *slog.Logger

	// wake is signalled (without blocking; capacity 1) by owners when a
	// range becomes owned. Never closed.
	wake chan struct{}
	// synced is closed at the first round in which this replica owns, and
	// claims, every range assigned to it (see Synced). Closed once, by
	// Run's goroutine.
	synced chan struct{}
	// renewed is the clock time, in Unix nanoseconds, of the last
	// successful write of the Lease: Owns is fenced a LeaseDuration later.
	renewed atomic.Int64

	// mu guards owners, started and status.
	mu      sync.Mutex
	owners  []RangeOwner
	started bool
	status  Status

	// The fields below belong to Run's goroutine.
	peers    map[string]*peer // by Lease name, this replica's excluded
	mine     *coordinationv1.Lease
	claimed  []int // as last written
	leaving  bool
	members  []string  // of the last split
	split    string    // members of the last split, joined: to see changes
	changeAt time.Time // when the split last changed, if not converged since
	pending  bool
}

// NewGroup checks opts and returns a Group that has not started.
func NewGroup(opts GroupOptions) (*Group, error) {
	switch {
	case opts.Client == nil:
		return nil, errors.New("replicas: NewGroup: nil Client")
	case opts.Namespace == "":
		return nil, errors.New("replicas: NewGroup: no Namespace")
	}
	if errs := validation.IsDNS1123Label(opts.Name); len(errs) > 0 {
		return nil, fmt.Errorf("replicas: NewGroup: Name %q: %s", opts.Name, strings.Join(errs, "; "))
	}
	if opts.Identity == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		opts.Identity = host + "-" + hex.EncodeToString(b)
	}
	if opts.Slots == 0 {
		opts.Slots = DefaultSlots
	}
	if opts.Slots < 1 || opts.Slots > shard.MaxSplit {
		return nil, fmt.Errorf("replicas: NewGroup: Slots %d: want 1 to shard.MaxSplit (%d)", opts.Slots, shard.MaxSplit)
	}
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.RenewPeriod == 0 {
		opts.RenewPeriod = opts.LeaseDuration / 5
	}
	if opts.PollPeriod == 0 {
		opts.PollPeriod = opts.RenewPeriod
	}
	if opts.LeaseDuration < time.Second || opts.RenewPeriod <= 0 || opts.RenewPeriod >= opts.LeaseDuration/2 || opts.PollPeriod <= 0 {
		return nil, fmt.Errorf("replicas: NewGroup: want LeaseDuration >= 1s and 0 < RenewPeriod < LeaseDuration/2, got %s and %s",
			opts.LeaseDuration, opts.RenewPeriod)
	}
	if opts.SettlePeriod == 0 {
		opts.SettlePeriod = opts.PollPeriod
	}
	if opts.SettlePeriod < 0 {
		return nil, fmt.Errorf("replicas: NewGroup: negative SettlePeriod %s", opts.SettlePeriod)
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	g := &Group{
		opts:   opts,
		leases: opts.Client.Leases(opts.Namespace),
		ranges: shard.Split(opts.Slots),
		log:    opts.Logger.With("group", opts.Name, "replica", opts.Identity),
		wake:   make(chan struct{}, 1),
		synced: make(chan struct{}),
		peers:  map[string]*peer{},
	}
	if opts.Metrics != nil {
		g.m = opts.Metrics.NewReplicaMetrics(opts.Name)
	}
	g.m = g.m.WithDefaults()
	g.status = Status{Identity: opts.Identity, Slots: opts.Slots}
	return g, nil
}

// Identity returns this replica's identity.
func (g *Group) Identity() string { return g.opts.Identity }

// Ranges returns the group's ranges: Status's indexes point into it.
func (g *Group) Ranges() []shard.Range { return slices.Clone(g.ranges) }

// Add hands the group's ranges to owners (Informers): Run runs them and
// has them acquire and release ranges together; a range is owned once
// every owner has synced it. Add must be called before Run.
func (g *Group) Add(owners ...RangeOwner) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return errors.New("replicas: Group.Add after Run")
	}
	for _, o := range owners {
		o.attach(g.fresh, g.notify)
	}
	g.owners = append(g.owners, owners...)
	return nil
}

// Synced returns a channel closed once this replica has joined the group
// and, for the first time, owns (synced in every RangeOwner, every handler
// told) and claims every range the split assigns to it: the replica's
// share is cached. Later changes of the split do not reopen it. A replica
// that never joins (it cannot write its Lease) never closes it.
func (g *Group) Synced() <-chan struct{} { return g.synced }

// Status returns what the replica knows of its group now.
func (g *Group) Status() Status {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.status
	s.Members, s.Assigned, s.Owned = slices.Clone(s.Members), slices.Clone(s.Assigned), slices.Clone(s.Owned)
	s.Claims = maps.Clone(s.Claims)
	return s
}

// fresh reports whether this replica's own claims still stand: it wrote
// its Lease less than a LeaseDuration ago.
func (g *Group) fresh() bool {
	last := g.renewed.Load()
	return last != 0 && g.opts.Clock.Since(time.Unix(0, last)) < g.opts.LeaseDuration
}

func (g *Group) notify() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

func (g *Group) report(err error) {
	if g.opts.ErrorHandler != nil {
		g.opts.ErrorHandler(err)
		return
	}
	g.log.Error("kinformer replicas", "err", err)
}

// Run takes part in the group until ctx is done, then leaves it: it marks
// its Lease as leaving, waits (up to a LeaseDuration) until the others
// have claimed its ranges, releases them, deletes its Lease and stops its
// owners. It returns once every goroutine it started has exited. It may be
// called once.
func (g *Group) Run(ctx context.Context) error {
	g.mu.Lock()
	if g.started {
		g.mu.Unlock()
		return errors.New("replicas: Group.Run called twice")
	}
	g.started = true
	owners := slices.Clone(g.owners)
	g.mu.Unlock()

	// The owners outlive ctx by the leave, which still hands ranges over.
	ownersCtx, stopOwners := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for _, o := range owners {
		wg.Go(func() {
			if err := o.Run(ownersCtx); err != nil {
				g.report(fmt.Errorf("replicas: %s: %w", o.Name(), err))
			}
		})
	}
	defer func() {
		stopOwners()
		wg.Wait()
	}()

	settleUntil := g.opts.Clock.Now().Add(g.opts.SettlePeriod)
	tick := g.opts.Clock.NewTicker(g.opts.PollPeriod)
	defer tick.Stop()
	// Join: write the Lease, claiming nothing, and split only once the
	// group has settled (see GroupOptions.SettlePeriod), so that replicas
	// started together see each other before they split rather than the
	// first taking everything for a moment.
	for ctx.Err() == nil {
		g.observe(ctx)
		now := g.opts.Clock.Now()
		if g.mine == nil || g.renewDue(now) {
			g.writeLease(ctx, nil)
		}
		if g.mine != nil && g.renewed.Load() != 0 && (g.groupRuns(now) || !now.Before(settleUntil)) {
			break
		}
		select {
		case <-ctx.Done():
		case <-tick.C():
		}
	}
	for ctx.Err() == nil {
		g.step(ctx, owners)
		select {
		case <-ctx.Done():
		case <-tick.C():
		case <-g.wake:
		}
	}
	g.leave(context.WithoutCancel(ctx), owners)
	return nil
}

// groupRuns reports whether a member of the group claims ranges at now:
// the group is running, not starting, and a joiner need not wait for it to
// settle.
func (g *Group) groupRuns(now time.Time) bool {
	for _, p := range g.peers {
		if p.valid(now) && len(p.claims) > 0 {
			return true
		}
	}
	return false
}

// step is one round: read the Leases, renew if due, reconcile the ranges.
func (g *Group) step(ctx context.Context, owners []RangeOwner) {
	g.observe(ctx)
	g.reconcile(ctx, owners)
}

// observe reads the group's Leases into g.peers.
func (g *Group) observe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, g.opts.PollPeriod+time.Second)
	defer cancel()
	list, err := g.leases.List(ctx, metav1.ListOptions{LabelSelector: GroupLabel + "=" + g.opts.Name})
	if err != nil {
		if ctx.Err() == nil {
			g.report(fmt.Errorf("replicas: group %s: list Leases: %w", g.opts.Name, err))
		}
		return
	}
	now := g.opts.Clock.Now()
	mine := leaseName(g.opts.Name, g.opts.Identity)
	seen := map[string]*peer{}
	for i := range list.Items {
		l := &list.Items[i]
		if l.Name == mine {
			if g.mine == nil { // left by an earlier run, or after a conflict
				g.mine = l.DeepCopy()
			}
			continue
		}
		p := readLease(l, g.peers[l.Name], now)
		if p.bad != "" && (g.peers[l.Name] == nil || g.peers[l.Name].bad != p.bad) {
			g.log.Warn("kinformer replicas: ignoring a Lease", "lease", l.Name, "why", p.bad)
		}
		if p.bad == "" && p.slots != g.opts.Slots {
			p.bad = fmt.Sprintf("%d slots, this replica has %d", p.slots, g.opts.Slots)
		}
		seen[l.Name] = p
		// A Lease expired long ago is a replica that died: clear it away,
		// unless it was renewed since this list.
		if p.bad == "" && now.Sub(p.observed) > 2*p.duration {
			err := g.leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &l.ResourceVersion}})
			if err == nil {
				g.log.Info("kinformer replicas: deleted an expired Lease", "lease", l.Name, "holder", p.identity)
				delete(seen, l.Name)
			}
		}
	}
	g.peers = seen
}

// reconcile computes the split, starts and releases ranges, and writes
// the Lease when its claims changed or its renewal is due.
func (g *Group) reconcile(ctx context.Context, owners []RangeOwner) {
	now := g.opts.Clock.Now()
	me := g.opts.Identity
	members := []string{}
	if !g.leaving {
		members = append(members, me)
	}
	claims := map[string][]int{}
	for _, p := range g.peers {
		if p.member(now) {
			members = append(members, p.identity)
		}
		if p.valid(now) {
			claims[p.identity] = p.claims
		}
	}
	slices.Sort(members)
	members = slices.Compact(members)
	g.members = members
	owner := Assign(members, g.opts.Slots)
	if key := strings.Join(members, ","); key != g.split {
		if g.split != "" || len(members) > 0 {
			g.log.Info("kinformer replicas: members changed", "members", members)
		}
		g.split, g.changeAt, g.pending = key, now, true
		g.m.Members.Set(float64(len(members)))
	}

	var assigned []int
	for s, r := range g.ranges {
		mineNow := len(owner) > s && owner[s] == me
		if mineNow {
			assigned = append(assigned, s)
			for _, o := range owners {
				if !o.holds(r) {
					if err := o.acquire(ctx, r); err != nil {
						g.report(fmt.Errorf("replicas: %s: acquire range %d: %w", o.Name(), s, err))
					}
				}
			}
			continue
		}
		if !g.holdsAny(owners, r) {
			continue
		}
		// Not ours: give it up once its new owner claims it, or at once if
		// it was never ours (still syncing).
		newOwner := ""
		if len(owner) > s {
			newOwner = owner[s]
		}
		if g.ownsAll(owners, r) && !slices.Contains(claims[newOwner], s) {
			continue
		}
		g.releaseRange(ctx, owners, s)
	}

	owned := g.ownedSlots(owners)
	claims[me] = owned
	if !slices.Equal(owned, g.claimed) || g.mine == nil || g.renewDue(now) {
		g.writeLease(ctx, owned)
	}
	objects := 0
	for _, o := range owners {
		objects += o.objects()
	}
	g.m.RangesOwned.Set(float64(len(owned)))
	g.m.ObjectsOwned.Set(float64(objects))
	if g.pending && slices.Equal(assigned, owned) && slices.Equal(g.claimed, owned) {
		g.pending = false
		g.m.Convergence.Observe(now.Sub(g.changeAt).Seconds())
		if !g.leaving && slices.Contains(members, me) {
			select {
			case <-g.synced:
			default:
				close(g.synced)
			}
		}
	}

	g.mu.Lock()
	g.status.Members, g.status.Assigned, g.status.Owned = members, assigned, slices.Clone(g.claimed)
	claims[me] = slices.Clone(g.claimed)
	g.status.Claims, g.status.Objects = claims, objects
	g.mu.Unlock()
}

// releaseRange releases slot s in every owner.
func (g *Group) releaseRange(ctx context.Context, owners []RangeOwner, s int) {
	wasOwned := g.ownsAll(owners, g.ranges[s])
	for _, o := range owners {
		if err := o.release(ctx, g.ranges[s]); err != nil {
			g.report(fmt.Errorf("replicas: %s: release range %d: %w", o.Name(), s, err))
		}
	}
	if wasOwned {
		g.m.Released.Inc()
		g.log.Info("kinformer replicas: released a range", "range", s)
	}
}

func (g *Group) holdsAny(owners []RangeOwner, r shard.Range) bool {
	for _, o := range owners {
		if o.holds(r) {
			return true
		}
	}
	return false
}

func (g *Group) ownsAll(owners []RangeOwner, r shard.Range) bool {
	for _, o := range owners {
		if !o.isOwned(r) {
			return false
		}
	}
	return true
}

// ownedSlots returns the slots every owner owns. With no owner, a replica
// owns what it holds by assignment: nothing to sync.
func (g *Group) ownedSlots(owners []RangeOwner) []int {
	var out []int
	for s, r := range g.ranges {
		if len(owners) > 0 && g.ownsAll(owners, r) {
			out = append(out, s)
		}
	}
	return out
}

func (g *Group) renewDue(now time.Time) bool {
	return now.Sub(time.Unix(0, g.renewed.Load())) >= g.opts.RenewPeriod
}

// writeLease creates or renews this replica's Lease with claims.
func (g *Group) writeLease(ctx context.Context, claims []int) {
	ctx, cancel := context.WithTimeout(ctx, g.opts.RenewPeriod+time.Second)
	defer cancel()
	now := g.opts.Clock.Now()
	want := newLease(g.opts.Name, g.opts.Namespace, g.opts.Identity, g.opts.Slots, claims, g.leaving, g.opts.LeaseDuration, now)
	var got *coordinationv1.Lease
	var err error
	if g.mine == nil {
		got, err = g.leases.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			g.mine = nil // a Lease of ours from before a restart: observe reads it
			err = fmt.Errorf("exists: read at the next poll: %w", err)
		}
	} else {
		want.ResourceVersion = g.mine.ResourceVersion
		want.Spec.AcquireTime = g.mine.Spec.AcquireTime
		got, err = g.leases.Update(ctx, want, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) { // deleted by a peer that took us for dead
			want.ResourceVersion = ""
			got, err = g.leases.Create(ctx, want, metav1.CreateOptions{})
		}
	}
	if err != nil {
		if apierrors.IsConflict(err) {
			g.mine = nil
		}
		if ctx.Err() == nil || errors.Is(err, context.DeadlineExceeded) {
			g.report(fmt.Errorf("replicas: group %s: write Lease: %w", g.opts.Name, err))
		}
		return
	}
	g.mine = got
	for _, s := range claims {
		if !slices.Contains(g.claimed, s) {
			g.m.Acquired.Inc()
			g.log.Info("kinformer replicas: claimed a range", "range", s)
		}
	}
	g.claimed = slices.Clone(claims)
	g.renewed.Store(now.UnixNano())
}

// leave hands every owned range over before the replica stops: it marks
// its Lease as leaving, then, until the others have claimed its ranges or a
// LeaseDuration has passed, releases each range as soon as its new owner
// claims it; then it releases what is left and deletes its Lease.
func (g *Group) leave(ctx context.Context, owners []RangeOwner) {
	g.leaving = true
	deadline := g.opts.Clock.Now().Add(g.opts.LeaseDuration)
	tick := g.opts.Clock.NewTicker(g.opts.PollPeriod)
	defer tick.Stop()
	for {
		g.step(ctx, owners)
		if len(g.ownedSlots(owners)) == 0 || len(g.members) == 0 || !g.opts.Clock.Now().Before(deadline) {
			break // handed over, nobody to hand over to, or out of time
		}
		<-tick.C()
	}
	for s, r := range g.ranges {
		if g.holdsAny(owners, r) {
			g.releaseRange(ctx, owners, s)
		}
	}
	if g.mine != nil {
		dctx, cancel := context.WithTimeout(ctx, g.opts.RenewPeriod+time.Second)
		defer cancel()
		rv := g.mine.ResourceVersion
		if err := g.leases.Delete(dctx, g.mine.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}); err != nil && !apierrors.IsNotFound(err) {
			g.report(fmt.Errorf("replicas: group %s: delete Lease: %w", g.opts.Name, err))
		}
	}
	g.log.Info("kinformer replicas: left the group")
}
