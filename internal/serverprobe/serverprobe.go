// Package serverprobe makes the reflector.Server that the informers of one
// kube-apiserver share: it asks the server's /readyz during an outage, so
// that every informer waiting out the outage tries again soon after the
// server is back (see reflector.Server). kube.Factory and the kinformer
// command use it.
package serverprobe

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/metacodec"
	"github.com/kinformer/kinformer/reflector"
)

// probeTimeout bounds one readiness probe: an apiserver that takes longer
// to say it is ready is not back yet.
const probeTimeout = 2 * time.Second

// New returns what the factory's informers share about their server
// (see reflector.Server): when any of them, or a probe of the server's
// /readyz every reflector.DefaultProbeInterval during an outage, gets an
// answer, the informers waiting out the outage try again within
// reflector.DefaultWakeSpread.
func New(cfg *rest.Config, hc *http.Client) *reflector.Server {
	client, err := probeClient(cfg, hc)
	if err != nil {
		// No client: no probe; informers still wake one another.
		return reflector.NewServer(reflector.ServerOptions{})
	}
	return reflector.NewServer(reflector.ServerOptions{Probe: func(ctx context.Context) error {
		return probeReady(ctx, client)
	}})
}

// probeClient is the client of the readiness probe; hc nil: its own.
func probeClient(cfg *rest.Config, hc *http.Client) (*rest.RESTClient, error) {
	rc := rest.CopyConfig(cfg)
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(rc); err != nil {
			return nil, err
		}
	}
	rc.GroupVersion = &schema.GroupVersion{Version: "v1"}
	rc.APIPath = "/api"
	rc.NegotiatedSerializer = metacodec.Serializer
	// The probe is one small request every half second while nothing
	// answers; it does not take tokens from the informers' rate limiter.
	rc.RateLimiter = nil
	return rest.RESTClientForConfigAndClient(rc, hc)
}

// probeReady asks the server's /readyz: nil when it is ready, or when it
// answers but does not let this client see its readiness (401, 403, 404:
// the informers' own requests will tell).
func probeReady(ctx context.Context, client *rest.RESTClient) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	err := client.Get().AbsPath("/readyz").MaxRetries(0).Do(ctx).Error()
	if err == nil {
		return nil
	}
	switch {
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err), apierrors.IsNotFound(err):
		return nil
	}
	return fmt.Errorf("readyz: %w", err)
}
