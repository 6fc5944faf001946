package intern

import (
	"encoding/binary"
	"slices"

	"github.com/kinformer/kinformer/internal/wire"
	corev1 "k8s.io/api/core/v1"
)

// Shared decoding of pods. Interning strings after decoding still
// allocates every container, volume and condition of every pod and leaves
// a pod its own copy of each struct. But the pods of one workload carry
// byte-identical encodings of their containers, volumes, tolerations,
// security context and (often) status conditions. A protobuf message's
// fields decode independently of each other, and repeated fields append in
// order, so a pod decodes the same when those fields are cut out of its
// bytes, decoded on their own into a PodSpec (or PodStatus) and assigned
// back. The interner keeps such a decode per distinct encoding, so a pod
// whose containers it has seen costs a map lookup instead of a decode, and
// shares them (slices, structs and all they point to) with the other pods.

// Fields of PodSpec and PodStatus whose decode is shared (bit n: field
// number n). Each is a repeated or embedded message of PodSpec / PodStatus
// that mergeSpec / Pod assigns.
const (
	sharedSpecFields = 1<<1 | // volumes
		1<<2 | // containers
		1<<14 | // securityContext
		1<<18 | // affinity
		1<<20 | // initContainers
		1<<22 | // tolerations
		1<<28 | // readinessGates
		1<<33 // topologySpreadConstraints
	sharedStatusFields = 1 << 2 // conditions
)

// Field numbers of Pod's spec and status, and the bounds of the shared
// decode tables: entries, and total bytes of their keys (the encodings;
// the decoded values they keep alive are a few times that).
const (
	podSpecField   = 2
	podStatusField = 3
	maxSpanDecodes = 4096
	maxSpanKeys    = 4 << 20
	maxSpans       = 8 // per message; more: decode the pod plainly
)

// span is a run of consecutive shared fields: [start, end) of a message.
type span struct{ start, end int }

// spans are the runs of shared fields of one message, in order.
type spans struct {
	n int
	s [maxSpans]span
}

func (sp *spans) all() []span { return sp.s[:sp.n] }

// cut finds the shared fields (numbers in set) of msg and the length of
// what remains. ok is false when msg is malformed, a shared field appears
// in two separate runs (cutting would reorder it), or there are too many
// runs: the caller then decodes plainly.
func cut(msg []byte, set uint64) (sp spans, kept int, ok bool) {
	var done, run uint64 // fields of the closed runs, of the current run
	f := wire.Fields{B: msg}
	for {
		start := len(msg) - len(f.B)
		fld, more, err := f.Next()
		if err != nil {
			return sp, 0, false
		}
		if !more {
			break
		}
		num := fld.Num
		end := len(msg) - len(f.B)
		if num >= 64 || set&(1<<num) == 0 {
			done |= run
			run = 0
			continue
		}
		bit := uint64(1) << num
		switch {
		case done&bit != 0:
			return sp, 0, false
		case run != 0:
			sp.s[sp.n-1].end = end
		case sp.n == maxSpans:
			return sp, 0, false
		default:
			sp.s[sp.n] = span{start, end}
			sp.n++
		}
		run |= bit
	}
	kept = len(msg)
	for _, s := range sp.all() {
		kept -= s.end - s.start
	}
	return sp, kept, true
}

// appendWithout appends msg minus spans to out.
func appendWithout(out, msg []byte, spans []span) []byte {
	at := 0
	for _, s := range spans {
		out = append(out, msg[at:s.start]...)
		at = s.end
	}
	return append(out, msg[at:]...)
}

// Pod decodes a pod's protobuf bytes (envelope removed) through decode and
// interns it. With Options.ShareParts, the decode of its spec and status
// runs (see the package doc) is shared with earlier pods of the same
// bytes; it falls back to decoding raw plainly when the bytes are not as
// the apiserver writes them, so errors are decode's. The returned pod
// equals decode(raw)'s. Its gain is BenchmarkRetained's spec-runs and
// status-runs lines (memory) and their ns/pod (decode time).
func (in *Interner) Pod(raw []byte, decode func([]byte) (*corev1.Pod, error)) (*corev1.Pod, error) {
	if !in.has(shareSpecRuns) && !in.has(shareStatusRuns) {
		// Nothing decoded is shared: decode without the lock, so that
		// several goroutines decoding pods (a checkpoint's load) overlap
		// and serialize only on the tables.
		p, err := decode(raw)
		if err != nil {
			return nil, err
		}
		in.Object(p)
		return p, nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	p, ok := in.podSharedLocked(raw, decode)
	if !ok {
		var err error
		if p, err = decode(raw); err != nil {
			return nil, err
		}
		in.objectLocked(p)
	}
	return p, nil
}

func (in *Interner) podSharedLocked(raw []byte, decode func([]byte) (*corev1.Pod, error)) (*corev1.Pod, bool) {
	var specSet, statusSet uint64
	if in.has(shareSpecRuns) {
		specSet = sharedSpecFields
	}
	if in.has(shareStatusRuns) {
		statusSet = sharedStatusFields
	}
	if specSet == 0 && statusSet == 0 {
		return nil, false
	}
	var specSpans, statusSpans spans
	var spec, status []byte
	out := make([]byte, 0, len(raw))
	f := wire.Fields{B: raw}
	for {
		start := len(raw) - len(f.B)
		fld, more, err := f.Next()
		if err != nil {
			return nil, false
		}
		if !more {
			break
		}
		num, typ, val := fld.Num, fld.Type, fld.Bytes
		end := len(raw) - len(f.B)
		set := uint64(0)
		switch {
		case typ == wire.Bytes && num == podSpecField && spec == nil:
			spec, set = val, specSet
		case typ == wire.Bytes && num == podStatusField && status == nil:
			status, set = val, statusSet
		case typ == wire.Bytes && (num == podSpecField || num == podStatusField):
			return nil, false // a second spec or status: merged by Unmarshal
		default:
			out = append(out, raw[start:end]...)
			continue
		}
		sp, kept, ok := cut(val, set)
		if !ok {
			return nil, false
		}
		if num == podSpecField {
			specSpans = sp
		} else {
			statusSpans = sp
		}
		out = binary.AppendUvarint(out, num<<3|wire.Bytes)
		out = binary.AppendUvarint(out, uint64(kept))
		out = appendWithout(out, val, sp.all())
	}
	p, err := decode(out)
	if err != nil {
		return nil, false
	}
	in.objectLocked(p)
	for _, s := range specSpans.all() {
		shared, err := in.sharedSpecLocked(spec[s.start:s.end])
		if err != nil {
			return nil, false
		}
		mergeSpec(&p.Spec, shared)
	}
	for _, s := range statusSpans.all() {
		shared, err := in.sharedStatusLocked(status[s.start:s.end])
		if err != nil {
			return nil, false
		}
		p.Status.Conditions = shared.Conditions
	}
	return p, true
}

// sharedSpecLocked returns the PodSpec holding only the fields encoded in
// b, decoded once per distinct b and interned.
func (in *Interner) sharedSpecLocked(b []byte) (*corev1.PodSpec, error) {
	if s, ok := in.specs[string(b)]; ok {
		return s, nil
	}
	s := new(corev1.PodSpec)
	if err := s.Unmarshal(b); err != nil {
		return nil, err
	}
	in.podSpec(s)
	s.Volumes = slices.Clip(s.Volumes)
	s.Containers = slices.Clip(s.Containers)
	s.InitContainers = slices.Clip(s.InitContainers)
	s.Tolerations = slices.Clip(s.Tolerations)
	s.ReadinessGates = slices.Clip(s.ReadinessGates)
	s.TopologySpreadConstraints = slices.Clip(s.TopologySpreadConstraints)
	in.makeRoomLocked(len(b))
	in.specs[string(b)] = s
	return s, nil
}

// sharedStatusLocked is sharedSpecLocked for PodStatus.
func (in *Interner) sharedStatusLocked(b []byte) (*corev1.PodStatus, error) {
	if s, ok := in.statuses[string(b)]; ok {
		return s, nil
	}
	s := new(corev1.PodStatus)
	if err := s.Unmarshal(b); err != nil {
		return nil, err
	}
	in.podStatus(s)
	s.Conditions = slices.Clip(s.Conditions)
	in.makeRoomLocked(len(b))
	in.statuses[string(b)] = s
	return s, nil
}

// makeRoomLocked empties the shared decode tables when adding a key of n
// bytes would pass their bounds.
func (in *Interner) makeRoomLocked(n int) {
	if len(in.specs)+len(in.statuses) < maxSpanDecodes && in.spanBytes+n <= maxSpanKeys {
		in.spanBytes += n
		return
	}
	clear(in.specs)
	clear(in.statuses)
	in.spanBytes = n
}

// mergeSpec assigns to dst the shared fields src holds (see
// sharedSpecFields).
func mergeSpec(dst, src *corev1.PodSpec) {
	if src.Volumes != nil {
		dst.Volumes = src.Volumes
	}
	if src.Containers != nil {
		dst.Containers = src.Containers
	}
	if src.SecurityContext != nil {
		dst.SecurityContext = src.SecurityContext
	}
	if src.Affinity != nil {
		dst.Affinity = src.Affinity
	}
	if src.InitContainers != nil {
		dst.InitContainers = src.InitContainers
	}
	if src.Tolerations != nil {
		dst.Tolerations = src.Tolerations
	}
	if src.ReadinessGates != nil {
		dst.ReadinessGates = src.ReadinessGates
	}
	if src.TopologySpreadConstraints != nil {
		dst.TopologySpreadConstraints = src.TopologySpreadConstraints
	}
}
