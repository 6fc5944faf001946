// Package clusterid reads what names a cluster for checkpoints: the uid of
// its kube-system namespace, which is made when a cluster is first set up
// and survives apiserver restarts and upgrades (a cluster restored from an
// etcd backup keeps it too). kube's factories and the command's informers
// share it.
package clusterid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/metacodec"
)

// Reader reads the identity once and remembers it; a failure is not
// remembered, so the next caller asks again. Make it with New; it is safe
// for concurrent use.
type Reader struct {
	client *rest.RESTClient // nil when it could not be built (err says why)
	err    error
	// mapErr maps a failed request's error (onto listwatch's errors).
	mapErr func(error) error

	mu  sync.Mutex // guards uid; held while asking, so one request at a time
	uid string
}

// New returns a Reader of the cluster cfg points at, whose requests go
// through hc (nil: one made from cfg). mapErr, when set, maps the error of
// a failed request.
func New(cfg *rest.Config, hc *http.Client, mapErr func(error) error) *Reader {
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &schema.GroupVersion{Version: "v1"}
	rc.APIPath = "/api"
	rc.NegotiatedSerializer = metacodec.Serializer
	rc.AcceptContentTypes = "application/json"
	if rc.UserAgent == "" {
		rc.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if mapErr == nil {
		mapErr = func(err error) error { return err }
	}
	r := &Reader{mapErr: mapErr}
	if hc == nil {
		hc, r.err = rest.HTTPClientFor(rc)
		if r.err != nil {
			return r
		}
	}
	r.client, r.err = rest.RESTClientForConfigAndClient(rc, hc)
	return r
}

// Get returns the cluster's identity, asking the server the first time.
func (r *Reader) Get(ctx context.Context) (string, error) {
	if r.err != nil {
		return "", fmt.Errorf("cluster identity: %w", r.err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.uid != "" {
		return r.uid, nil
	}
	body, err := r.client.Get().Resource("namespaces").Name("kube-system").MaxRetries(0).Do(ctx).Raw()
	if err != nil {
		return "", fmt.Errorf("cluster identity: get namespace kube-system: %w", r.mapErr(err))
	}
	var ns metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &ns); err != nil {
		return "", fmt.Errorf("cluster identity: namespace kube-system: %w", err)
	}
	if ns.UID == "" {
		return "", errors.New("cluster identity: namespace kube-system has no uid")
	}
	r.uid = string(ns.UID)
	return r.uid, nil
}
