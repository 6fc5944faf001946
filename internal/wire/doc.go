// Package wire reads protobuf messages field by field without copying, for
// the code that looks inside what the apiserver sends before, or instead
// of, the generated Unmarshal methods: the kube sources' envelopes, list
// bodies and watch frames, string interning (internal/intern) and decoding
// straight into projected views (internal/project). It is the one protobuf
// walker of the module; everything it reads is untrusted, so every length
// is checked against the input and a malformed message is an error, never
// a panic (FuzzNext, FuzzParseEnvelope).
//
// Every []byte it returns aliases its input.
//
// It exists because the generated code has no way to read one field of a
// message without decoding all of it: bench scenarios pod-memory and
// pod-memory-shared (interning and sharing read each pod's fields off the
// wire before decoding it), sync-cpu-projected (a view decodes only its
// fields) and heap-per-pod-projected pay for it.
package wire
