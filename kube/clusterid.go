package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// clusterIdentity reads, once per factory, what names the cluster for
// checkpoints: the uid of its kube-system namespace, which is made when a
// cluster is first set up and survives apiserver restarts and upgrades (a
// cluster restored from an etcd backup keeps it too: see
// informer.CheckpointOptions). A failure is not remembered, so the next
// informer to ask tries again.
type clusterIdentity struct {
	client *rest.RESTClient // nil when it could not be built (err says why)
	err    error

	mu  sync.Mutex // guards uid; held while asking, so one request at a time
	uid string
}

func newClusterIdentity(cfg *rest.Config, f *Factory) *clusterIdentity {
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &schema.GroupVersion{Version: "v1"}
	rc.APIPath = "/api"
	rc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc.AcceptContentTypes = "application/json"
	if rc.UserAgent == "" {
		rc.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	c, err := rest.RESTClientForConfigAndClient(rc, f.httpClient)
	return &clusterIdentity{client: c, err: err}
}

// get returns the cluster's identity, asking the server the first time.
// Its errors are mapped as a source's are (listwatch.ErrUnavailable while
// the server does not answer).
func (c *clusterIdentity) get(ctx context.Context) (string, error) {
	if c.err != nil {
		return "", fmt.Errorf("cluster identity: %w", c.err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.uid != "" {
		return c.uid, nil
	}
	body, err := c.client.Get().Resource("namespaces").Name("kube-system").MaxRetries(0).Do(ctx).Raw()
	if err != nil {
		return "", fmt.Errorf("cluster identity: get namespace kube-system: %w", mapError(err))
	}
	var ns metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &ns); err != nil {
		return "", fmt.Errorf("cluster identity: namespace kube-system: %w", err)
	}
	if ns.UID == "" {
		return "", errors.New("cluster identity: namespace kube-system has no uid")
	}
	c.uid = string(ns.UID)
	return c.uid, nil
}
