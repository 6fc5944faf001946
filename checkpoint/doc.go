// Package checkpoint stores an informer's cache in a file and reads it
// back, so that a restarted process can start from what it had instead of
// listing everything again (a warm restart).
//
// A checkpoint holds the cached objects, the resource version they
// reflect, and the identity of the informer that wrote it (the cluster,
// the resource, its selectors, the objects' Go type and encoding). Read
// refuses anything it cannot trust, and says why: a path that is not a
// regular file (ErrNotRegular, found without reading from it), a file that
// is truncated or whose checksum does not match (ErrCorrupt), of another
// format version (ErrVersion), of another cluster (ErrOtherCluster) or of
// another informer (ErrMismatch). Callers then start cold; a checkpoint is
// never half-loaded.
//
// A file that passes every check is still not the truth: it is what the
// cluster held at its resource version. package informer has the server
// confirm that version before anything of the file is served (see
// informer.CheckpointOptions), reading only the header (ReadHeader: the
// identity checks and the version, no object) until the server answers.
//
// # Format
//
// Version 2, all integers big-endian:
//
//	magic    8 bytes   "KINFCKPT"
//	version  uint16    2
//	header   uint32 n, then n bytes of JSON: identity (cluster, resource,
//	                   type, encoding), resource version,
//	                   object count, time written
//	objects  count times: uvarint n, then n bytes (Codec.Encode's output:
//	                   protobuf for built-in types, JSON otherwise)
//	trailer  "END!", then the CRC-32C (Castagnoli) of every byte before it
//
// Files are written to a temporary file in the same directory, synced,
// and renamed over the old one, so a reader sees the old checkpoint or the
// new one, never a mix; they are created with mode 0600.
//
// # Secrets
//
// A checkpoint is a copy of the cache on disk, in plain bytes: a checkpoint
// of Secrets (or of any object carrying credentials, such as a ConfigMap
// some controller misuses) writes those credentials to the disk, outside
// the apiserver's encryption at rest and access control. Do not checkpoint
// Secrets unless the directory is as well protected as the secrets
// themselves (a tmpfs or an encrypted volume only the controller's user
// can read); kube.FactoryOptions refuses to unless told explicitly.
package checkpoint
