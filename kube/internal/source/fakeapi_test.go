package source

import "github.com/kinformer/kinformer/kube/internal/fakeapi"

// The fake kube-apiserver of these tests (see package fakeapi), under
// short names.
var (
	fakeServer    = fakeapi.Server
	closeIdle     = fakeapi.CloseIdle
	protoBytes    = fakeapi.ProtoBytes
	jsonBytes     = fakeapi.JSONBytes
	protoFrame    = fakeapi.ProtoFrame
	protoFrameRaw = fakeapi.ProtoFrameRaw
	jsonFrame     = fakeapi.JSONFrame
	writeBody     = fakeapi.WriteBody
	writeStatus   = fakeapi.WriteStatus
	pod           = fakeapi.Pod
	podsGVR       = fakeapi.PodsGVR

	closedPortConfig = fakeapi.ClosedPort
)

const (
	mediaProto      = fakeapi.MediaProto
	mediaProtoWatch = fakeapi.MediaProtoWatch
	mediaJSON       = fakeapi.MediaJSON
)
