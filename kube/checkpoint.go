package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/checkpoint"
	"github.com/kinformer/kinformer/informer"
)

// Checkpoints configure the checkpoints of a Factory's informers (see
// informer.CheckpointOptions for what a checkpoint does, and package
// checkpoint for the file format). Only informers whose InformerOptions
// set Checkpoint have one, in Dir, in a file named after the informer's
// Key (resource, selection and type), written with mode 0600.
//
// What a checkpoint is trusted for. Each file names the cluster it was
// written for: the uid of the kube-system namespace, which the factory
// reads once from the server (it needs "get" on that namespace). A file of
// another cluster, resource, selection, type or encoding is refused and
// reported (checkpoint.ErrOtherCluster, ErrMismatch), and the informer
// starts cold; so is a file whose resource version the server is behind
// ("too large": a cluster restored from a backup). Nothing of a file is
// served before the server has confirmed its resource version, but for a
// version the server no longer has (see informer.CheckpointOptions for
// exactly what is served then, and why it is safe). A server that cannot
// say who it is (that get forbidden) gets no checkpoints: each start is
// cold, reported once per informer. Use one directory per cluster: a file
// of another cluster is replaced by this one's.
//
// Secrets: a checkpoint writes the cached objects to disk as they are. A
// checkpoint of Secrets puts their data on the disk, outside the
// apiserver's encryption at rest and access control, so the factory
// refuses to checkpoint the secrets resource unless AllowSecrets is set:
// set it only for a directory as well protected as the secrets themselves.
type Checkpoints struct {
	// Dir is the directory of the checkpoint files, created (mode 0700) if
	// missing. Empty: no checkpoints.
	Dir string
	// Interval and Changes say how often a changed cache is written
	// (informer.CheckpointOptions); zero values take the defaults.
	Interval time.Duration
	Changes  int
	// AllowSecrets lets informers of Secrets have checkpoints.
	AllowSecrets bool
}

// objectCodec is how b's objects are kept in a file.
func objectCodec[T cache.Object](b built[T]) (checkpoint.Codec[T], error) {
	if b.codec.Err != nil {
		return checkpoint.Codec[T]{}, b.codec.Err
	}
	if b.codec.Encode != nil {
		return checkpoint.Codec[T]{Name: b.codec.Name, Encode: b.codec.Encode, Decode: b.codec.Decode}, nil
	}
	codec, err := checkpoint.DefaultCodec[T]()
	if err != nil {
		return codec, err
	}
	if proto := b.src.ProtoDecoder(); proto != nil && codec.Name == "protobuf" {
		codec.Decode = proto
		return codec, nil
	}
	return checkpoint.Codec[T]{
		Name: "json",
		Encode: func(dst []byte, obj T) ([]byte, error) {
			b, err := json.Marshal(obj)
			return append(dst, b...), err
		},
		Decode: b.src.JSONDecoder(),
	}, nil
}

// ErrCheckpointSecrets: an informer of Secrets asked for a checkpoint
// without Checkpoints.AllowSecrets.
var ErrCheckpointSecrets = errors.New("checkpoints of Secrets write their data to disk: set Checkpoints.AllowSecrets to allow them")

// checkpointFor returns the checkpoint options of the informer of key, or
// none when want is false. The objects are encoded as the source decodes
// them: protobuf for typed and metadata sources, JSON for dynamic ones,
// decoded back through the source's own decoder (so a typed informer's
// strings are interned as they are after a list); a view as the protobuf
// of the fields it holds, read back through the view's own plan (see
// source.View). An expired checkpoint of a view is not read
// (CheckpointOptions.SkipExpired).
func checkpointFor[T cache.Object](f *Factory, key Key, b built[T], want bool) (informer.CheckpointOptions[T], error) {
	var none informer.CheckpointOptions[T]
	if !want {
		return none, nil
	}
	c := f.opts.Checkpoints
	if c.Dir == "" {
		return none, errors.New("checkpoint asked for, but FactoryOptions.Checkpoints.Dir is empty")
	}
	if key.Resource.GVR.Group == "" && key.Resource.GVR.Resource == "secrets" && !c.AllowSecrets {
		return none, ErrCheckpointSecrets
	}
	codec, err := objectCodec(b)
	if err != nil {
		return none, fmt.Errorf("checkpoint: %w", err)
	}
	id := checkpoint.Identity{Resource: key.String(), Type: checkpoint.TypeName[T](), Encoding: codec.Name}
	return informer.CheckpointOptions[T]{
		Path:     checkpoint.Path(c.Dir, id),
		Identity: id,
		Cluster:  f.cluster.Get,
		Codec:    codec,
		Interval: c.Interval,
		Changes:  c.Changes,
		// A view's objects are small: decoding them from the file costs
		// what decoding them from an expired checkpoint's relist would.
		SkipExpired: b.codec.Encode != nil,
	}, nil
}
