package kube

import "github.com/kinformer/kinformer/kube/internal/source"

// ErrMalformed is wrapped by the error of a response that does not decode
// (a truncated or corrupt frame, an undecodable object, invalid JSON). On a
// watch it is final: every later Next returns the same error. An object that
// decodes but is of another kind than the source serves is reported as a
// *listwatch.DecodeError (errors.Is(err, listwatch.ErrWrongType)) instead,
// and only that event is skipped.
var ErrMalformed = source.ErrMalformed
