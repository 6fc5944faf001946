// Package intern makes Kubernetes objects decoded one at a time share the
// values they repeat, so that a cache of many similar objects (the pods of
// one workload) keeps one copy of each instead of one per object. It is the
// machinery behind the decoding of kube's sources of built-in types;
// nothing outside this module sees it.
//
// Two levels, chosen per Interner:
//
//   - Strings (always): every string of an object's metadata, and of the pod
//     specs and statuses it holds, is replaced by an equal string handed out
//     earlier. Go strings are immutable, so objects sharing them cannot
//     affect each other, whatever a caller does to them.
//   - Shared parts (Options.ShareParts): mutable values are shared too:
//     managedFields' FieldsV1 (a *FieldsV1 and its bytes), container resource
//     lists (maps), and the decode of a pod's containers, init containers,
//     volumes, tolerations, security context, affinity, readiness gates,
//     topology spread constraints and status conditions (slices, structs and
//     all they point to), found by cutting those fields out of the pod's
//     protobuf bytes. An in-place change to one such value changes it in
//     every object sharing it.
//
// What each level saves, in bytes retained per decoded pod (tables
// included) and in decode CPU, is measured by BenchmarkRetained:
//
//	go test -run '^$' -bench Retained -count 5 ./internal/intern
//
// and, through the whole informer against client-go, by the bench
// scenarios pod-memory and pod-memory-shared (cd bench && go run ./cmd/bench
// -run pod-memory). Measured on 10,000 pods (B/pod min/median/max of 5
// runs; each spread is under 5 B): plain decoding 10,448; strings 9,819;
// with ShareParts 4,219. Each shared part's gain with the others on (its
// shared-parts-without-X line minus the shared-parts line): FieldsV1 1,759,
// aliased FieldsV1 keys 290, resource lists 96, spec runs 1,938, status
// runs 479. Spec runs also cut decode CPU by about 40%.
package intern
