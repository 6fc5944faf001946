package reflector

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Defaults for ServerOptions.
const (
	// DefaultProbeInterval is how often Server.Run asks an unreachable
	// server whether it answers again.
	DefaultProbeInterval = 500 * time.Millisecond
	// DefaultWakeSpread is the window over which the reflectors waiting out
	// an outage are spread when the server answers again.
	DefaultWakeSpread = time.Second
)

// Server is what the reflectors of one server share about whether it
// answers. Each reflector given the same Server (Settings.Server) tells it
// how its requests went; when one of them, or the probe of Run, gets an
// answer after the server was unreachable, every reflector waiting out the
// outage in its back-off tries again at a moment drawn uniformly from the
// next WakeSpread, instead of sleeping out a delay of up to twice
// Settings.BackoffMax.
//
// The burst this sends to a server that has just come back is bounded: each
// waiting reflector sends one request, spread over WakeSpread (N reflectors
// make N requests, about N/WakeSpread a second, and the client's own rate
// limiter still applies), and a reflector whose early try fails again
// waits out its own back-off until one of its requests succeeds, so a
// server that answers with errors is protected by the per-reflector
// back-off as before.
//
// A Server is safe for concurrent use. Its zero value is not usable; make
// one with NewServer.
type Server struct {
	probe    func(context.Context) error
	interval time.Duration
	spread   time.Duration
	clock    clock.WithTicker

	mu sync.Mutex
	// down: the last request that settled the question found the server
	// unreachable; back is closed when it answers again (and replaced when
	// it goes down once more).
	down bool
	back chan struct{}
	// wentDown wakes Run when down becomes true (capacity 1).
	wentDown chan struct{}
}

// ServerOptions configures a Server. The zero value takes every default and
// has no probe.
type ServerOptions struct {
	// Probe asks the server whether it answers: nil error when it does.
	// Run calls it every ProbeInterval while the server is unreachable,
	// so that the reflectors come back within about ProbeInterval plus
	// WakeSpread of the server, whatever their back-off. A probe should be
	// cheap (a kube-apiserver's /readyz) and give an error for a server
	// that answers but is not ready. nil: no probe; reflectors are woken
	// only when one of them gets an answer.
	Probe func(ctx context.Context) error
	// ProbeInterval defaults to DefaultProbeInterval.
	ProbeInterval time.Duration
	// WakeSpread defaults to DefaultWakeSpread.
	WakeSpread time.Duration
	// Clock defaults to clock.RealClock{}.
	Clock clock.WithTicker
}

// NewServer returns a Server that believes the server answers.
func NewServer(opts ServerOptions) *Server {
	s := &Server{
		probe:    opts.Probe,
		interval: orDefault(opts.ProbeInterval, DefaultProbeInterval),
		spread:   orDefault(opts.WakeSpread, DefaultWakeSpread),
		clock:    opts.Clock,
		back:     make(chan struct{}),
		wentDown: make(chan struct{}, 1),
	}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	return s
}

// Run probes the server while it is unreachable, one probe every
// ProbeInterval, and does nothing while it answers. It returns when ctx
// ends. Without Run (or without ServerOptions.Probe), reflectors still
// wake one another, but only when one of their own requests is answered.
func (s *Server) Run(ctx context.Context) {
	if s.probe == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wentDown:
		}
		for s.Unreachable() {
			t := s.clock.NewTimer(s.interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
			if !s.Unreachable() {
				break
			}
			if s.probe(ctx) == nil {
				s.answered()
			}
		}
	}
}

// Unreachable reports whether the last request that settled it found the
// server unreachable.
func (s *Server) Unreachable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// unreachable records a request that found the server unreachable.
func (s *Server) unreachable() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return
	}
	s.down = true
	select {
	case s.wentDown <- struct{}{}:
	default:
	}
}

// answered records a request the server answered (successfully or not),
// which ends an outage: the reflectors waiting on back are woken.
func (s *Server) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return
	}
	s.down = false
	close(s.back)
	s.back = make(chan struct{})
}

// backCh returns a channel closed when the server next answers after
// being unreachable; nil (never ready) while it answers.
func (s *Server) backCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return nil
	}
	return s.back
}

// wakeDelay is the delay of one woken reflector within the spread.
func (s *Server) wakeDelay() time.Duration {
	return time.Duration(rand.Float64() * float64(s.spread))
}
