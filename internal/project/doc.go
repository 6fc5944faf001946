// Package project decodes Kubernetes objects straight into view structs:
// Go structs that declare, with `kube:"spec.nodeName"` tags, only the
// fields a controller reads. A Plan is compiled once per view type, from
// the full type's protobuf and json struct tags (CompileGo) or from a
// schema (CompileSchema); DecodeProto and DecodeJSON then walk the wire
// bytes and write the declared fields in place, skipping every other field
// without allocating it. Package kube's View sources are built on it.
//
// It writes into views through unsafe pointers at offsets the compiler
// computed from reflect, which is why it lives under internal/. What pays
// for it: BenchmarkDecodePod (go test -run '^$' -bench DecodePod -benchmem
// ./internal/project) decodes a realistic pod (two containers,
// managedFields) in protobuf in about 7 µs, 31 allocations and 1.0 KB
// (12 allocations and 0.76 KB with interning) against the generated
// Unmarshal's 21 µs, 188 allocations and 11 KB; in JSON in about 16 µs
// against encoding/json's 250 µs. In a real sync, bench/cmd/controlplane
// -memory's heap-per-pod-projected (0.07 of client-go's heap per pod) and
// sync-cpu-projected (0.39 of the full type's CPU per pod) lines.
package project
