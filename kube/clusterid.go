package kube

import (
	"github.com/kinformer/kinformer/internal/clusterid"
	"github.com/kinformer/kinformer/internal/listquery"
)

// newClusterIdentity reads, once per factory, the identity that names the
// cluster in checkpoints (see internal/clusterid), through the factory's
// client, its errors mapped as a source's are (listwatch.ErrUnavailable
// while the server does not answer).
func newClusterIdentity(f *Factory) *clusterid.Reader {
	return clusterid.New(f.cfg, f.httpClient, listquery.MapError)
}
