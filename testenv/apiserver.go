package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// apiServerArgs are the kube-apiserver flags of a control plane.
//
//   - Loopback only: it binds and advertises 127.0.0.1.
//   - Clients authenticate with the admin bearer token (--token-auth-file); the admin is in
//     system:masters, so RBAC (the authorizer, as in a real cluster) lets it do anything.
//   - Admission plugins that wait for controllers nobody runs here are off: ServiceAccount
//     would reject every pod until a controller created the namespace's "default" account.
//   - --etcd-compaction-interval of a year: history is only lost when a test calls
//     CompactEtcd. Not 0, which would also stop the apiserver from watching for other
//     compactions, so the watch cache would never learn of CompactEtcd's.
//   - --shutdown-watch-termination-grace-period: on SIGTERM the apiserver ends open watches
//     itself and exits. Without it (the upstream default) it stops listening at once but then
//     waits up to a minute for open watch streams before exiting.
//   - --endpoint-reconciler-type=none: the "kubernetes" service cannot point at a loopback
//     address, and the default reconciler would log an error about it every ten seconds.
func apiServerArgs(dir string, port int, etcdURL string, creds *credentials, opts Options) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--etcd-compaction-interval=8760h",
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file=" + creds.servingCert,
		"--tls-private-key-file=" + creds.servingKey,
		"--token-auth-file=" + creds.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + creds.serviceAccount,
		"--service-account-signing-key-file=" + creds.serviceAccount,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		"--profiling=false",
		"--shutdown-watch-termination-grace-period=2s",
		"--endpoint-reconciler-type=none",
		"--watch-cache=" + strconv.FormatBool(!opts.DisableWatchCache),
	}
	if len(opts.FeatureGates) > 0 {
		names := make([]string, 0, len(opts.FeatureGates))
		for name := range opts.FeatureGates {
			names = append(names, name)
		}
		slices.Sort(names)
		gates := make([]string, len(names))
		for i, name := range names {
			gates[i] = name + "=" + strconv.FormatBool(opts.FeatureGates[name])
		}
		args = append(args, "--feature-gates="+strings.Join(gates, ","))
	}
	return append(args, opts.APIServerFlags...)
}

// waitReady polls the apiserver's /readyz until it answers 200 (storage reachable, every
// post-start hook done, RBAC roles bootstrapped), the process exits, or ctx is done.
func waitReady(ctx context.Context, p *process, client *http.Client, url, token string) error {
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	var last error
	for {
		if done, err := p.exited(); done {
			return err
		}
		probeCtx, cancel := context.WithTimeout(ctx, probeTimeout)
		last = getReadyz(probeCtx, client, url, token)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: kube-apiserver not ready (last: %v): %w", last, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

func getReadyz(ctx context.Context, client *http.Client, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
