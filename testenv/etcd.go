package testenv

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Start-up polls a server's health endpoint every readyPoll, giving each probe probeTimeout
// (a probe that hangs must not hide that the server has exited).
const (
	readyPoll    = 100 * time.Millisecond
	probeTimeout = 2 * time.Second
)

// etcdArgs are the flags of the single-member etcd a control plane runs: loopback only, plain
// HTTP (nothing leaves the machine), and no fsync, because a test cluster's data is thrown
// away with its directory and fsync dominates write latency.
func etcdArgs(dataDir string, clientPort, peerPort int, extra []string) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	args := []string{
		"--name=testenv",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=testenv=" + peer,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
	return append(args, extra...)
}

// etcdClient talks to etcd's JSON gateway (the gRPC API mapped onto HTTP under /v3/), which
// is enough for health, revision and compaction and keeps gRPC out of testenv's imports.
type etcdClient struct {
	url  string // client URL, http://127.0.0.1:port
	http *http.Client
}

// waitHealthy polls /health until etcd reports healthy, the process exits, or ctx is done.
func (c *etcdClient) waitHealthy(ctx context.Context, p *process) error {
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	var last error
	for {
		if done, err := p.exited(); done {
			return err
		}
		var health struct {
			Health string `json:"health"`
		}
		probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
		last = c.call(probeCtx, http.MethodGet, "/health", nil, &health)
		cancel()
		if last == nil && health.Health == "true" {
			return nil
		}
		if last == nil {
			last = fmt.Errorf("health %q", health.Health)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: etcd not healthy (last: %v): %w", last, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// revision returns etcd's current revision (the resource version of the latest write).
func (c *etcdClient) revision(ctx context.Context) (int64, error) {
	// A count-only range over one key costs nothing and returns the header with the revision.
	req := map[string]any{"key": "AA==", "count_only": true} // key: base64 of a zero byte
	var resp struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := c.call(ctx, http.MethodPost, "/v3/kv/range", req, &resp); err != nil {
		return 0, fmt.Errorf("testenv: etcd revision: %w", err)
	}
	rev, err := strconv.ParseInt(resp.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("testenv: etcd revision %q: %w", resp.Header.Revision, err)
	}
	return rev, nil
}

// compactRevKey is the etcd key through which kube-apiservers share the revision etcd was
// last compacted at: the apiserver's own compactor writes it before compacting, and with
// ListFromCacheSnapshot on (the default since 1.34) every apiserver watches it and drops
// watch-cache snapshots older than it.
const compactRevKey = "compact_rev_key"

// compactAll discards all of etcd's history that any client can have seen, and returns the
// revision it compacted at: rev+1, where rev is the latest revision before the call. That
// revision is created by recording it under compactRevKey, as the apiserver's compactor does,
// so the apiserver learns of the compaction too. Other writes racing with this one only make
// the compacted revision older than the newest. It returns once the compaction has been
// applied to the backend (physical), so reads at older revisions fail right after.
func (c *etcdClient) compactAll(ctx context.Context) (int64, error) {
	rev, err := c.revision(ctx)
	if err != nil {
		return 0, err
	}
	target := rev + 1
	put := map[string]any{
		"key":   base64.StdEncoding.EncodeToString([]byte(compactRevKey)),
		"value": base64.StdEncoding.EncodeToString([]byte(strconv.FormatInt(target, 10))),
	}
	if err := c.call(ctx, http.MethodPost, "/v3/kv/put", put, &struct{}{}); err != nil {
		return 0, fmt.Errorf("testenv: record compaction at %d: %w", target, err)
	}
	req := map[string]any{"revision": strconv.FormatInt(target, 10), "physical": true}
	if err := c.call(ctx, http.MethodPost, "/v3/kv/compaction", req, &struct{}{}); err != nil {
		return 0, fmt.Errorf("testenv: etcd compaction at %d: %w", target, err)
	}
	return target, nil
}

// call sends body (if any) as JSON and decodes a 200 response into out.
func (c *etcdClient) call(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}
