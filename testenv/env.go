package testenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ErrStopped is returned by the methods of an Env that has been stopped.
var ErrStopped = errors.New("testenv: environment stopped")

// Env is a running control plane: one etcd and one kube-apiserver, each a child process
// listening on 127.0.0.1 only, with their data, credentials, kubeconfig and logs in a
// temporary directory.
//
// An Env lives until Stop is called or the context given to Start is done, whichever comes
// first; either way both processes are stopped and reaped and the directory is removed. All
// methods are safe for concurrent use. Methods other than Stop return ErrStopped (wrapped)
// once the Env is stopped.
type Env struct {
	dir      string
	bins     Binaries
	apiURL   string   // https://127.0.0.1:port, the same for every run of the apiserver
	apiArgs  []string // flags of every run of the apiserver
	creds    *credentials
	etcd     *process
	etcdAPI  *etcdClient
	probe    *http.Client // trusts the CA; used for /readyz polling
	config   *rest.Config // template handed out by RESTConfig
	kube     *kubernetes.Clientset
	kubeHTTP *http.Client // kube's transport; idle connections are closed on Stop

	stopOnce sync.Once
	stopErr  error // result of the first Stop; written inside stopOnce

	// lifecycle orders whole starts and stops of processes: StartAPIServer holds it while
	// spawning the apiserver (not while waiting for it to be ready), StopAPIServer and Stop
	// while terminating. It is taken before mu.
	lifecycle sync.Mutex
	// mu guards the fields below; never held while waiting for a process.
	mu        sync.Mutex
	apiserver *process // nil while the apiserver is stopped
	stopped   bool     // set by Stop; nothing starts afterwards
	// stopWatch deregisters the context.AfterFunc that stops the Env when Start's ctx is
	// done; set by Start (the AfterFunc may already be running Stop by then).
	stopWatch func() bool
}

// Start builds the control-plane binaries if needed (see Build; progress goes to
// opts.Build.Progress), starts etcd and kube-apiserver on free loopback ports and returns once
// the apiserver's /readyz succeeds and a kubeconfig has been written.
//
// ctx bounds the build and the life of the Env: when it is done the Env stops itself, so pass
// a context that lives as long as the Env should (a test's t.Context, or context.Background
// and a call to Stop). Waiting for the servers to become ready is bounded by
// opts.StartTimeout. On error nothing is left running and the temporary directory is
// removed; errors about a server that failed include the end of its log.
func Start(ctx context.Context, opts Options) (*Env, error) {
	bins := opts.Binaries
	if bins.Etcd == "" || bins.APIServer == "" {
		var err error
		if bins, err = Build(ctx, opts.Build); err != nil {
			return nil, err
		}
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	startCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var e *Env
	for attempt := 1; ; attempt++ {
		dir, err := os.MkdirTemp("", "kinformer-testenv-")
		if err != nil {
			return nil, fmt.Errorf("testenv: temporary directory: %w", err)
		}
		e = &Env{dir: dir, bins: bins}
		err = e.start(startCtx, opts)
		if err == nil {
			break
		}
		// Another process may take a port between freePorts and the server binding it;
		// then start again on other ports.
		conflict := e.portConflict()
		e.shutdown()
		if !conflict || attempt == startAttempts {
			return nil, err
		}
	}
	stopWatch := context.AfterFunc(ctx, func() { e.Stop() })
	e.mu.Lock()
	e.stopWatch = stopWatch
	e.mu.Unlock()
	return e, nil
}

// startAttempts is how many times Start tries when a server could not bind its port.
const startAttempts = 3

// portConflict reports whether a server's log says its port was taken.
func (e *Env) portConflict() bool {
	for _, path := range []string{e.EtcdLogPath(), e.APIServerLogPath()} {
		if tail, err := tailFile(path, errorLogLines); err == nil && bytes.Contains(tail, []byte("address already in use")) {
			return true
		}
	}
	return false
}

// start does Start's work after the directory exists. On error the caller calls shutdown.
func (e *Env) start(ctx context.Context, opts Options) error {
	ports, err := pickPorts(3)
	if err != nil {
		return err
	}
	e.creds, err = writeCredentials(filepath.Join(e.dir, "credentials"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.creds.caPEM)
	e.probe = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	e.etcdAPI = &etcdClient{url: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), http: &http.Client{Transport: &http.Transport{}}}
	e.etcd, err = startProcess("etcd", e.bins.Etcd,
		etcdArgs(filepath.Join(e.dir, "etcd-data"), ports[0], ports[1], opts.EtcdFlags), e.EtcdLogPath())
	if err != nil {
		return err
	}
	if err := e.etcdAPI.waitHealthy(ctx, e.etcd); err != nil {
		return withLogTail(err, e.EtcdLogPath())
	}

	e.apiURL = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	e.apiArgs = apiServerArgs(e.dir, ports[2], e.etcdAPI.url, e.creds, opts)
	if err := e.StartAPIServer(ctx); err != nil {
		return err
	}

	e.config = &rest.Config{
		Host:            e.apiURL,
		BearerToken:     e.creds.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.creds.caPEM},
		// A local test server: no client-side throttling (negative QPS disables it).
		QPS: -1,
	}
	if err := writeKubeconfig(e.KubeconfigPath(), e.config); err != nil {
		return err
	}
	kubeConfig := rest.CopyConfig(e.config)
	kubeConfig.ContentType = "application/vnd.kubernetes.protobuf"
	kubeConfig.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	if e.kubeHTTP, err = rest.HTTPClientFor(kubeConfig); err != nil {
		return fmt.Errorf("testenv: client: %w", err)
	}
	if e.kube, err = kubernetes.NewForConfigAndClient(kubeConfig, e.kubeHTTP); err != nil {
		return fmt.Errorf("testenv: client: %w", err)
	}
	return nil
}

// Stop stops the apiserver and etcd (SIGTERM, then SIGKILL if one has not exited after a
// grace period), waits until both have exited, and removes the temporary directory with the
// kubeconfig and logs. It may be called any number of times, concurrently too; every call
// returns once the first has finished, with its result.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		e.mu.Lock()
		stopWatch := e.stopWatch
		e.mu.Unlock()
		if stopWatch != nil {
			stopWatch() // Stop was called directly: the AfterFunc is no longer needed.
		}
		e.stopErr = e.shutdown()
	})
	return e.stopErr
}

// shutdown ends whatever has been started and removes the directory.
func (e *Env) shutdown() error {
	e.lifecycle.Lock()
	defer e.lifecycle.Unlock()
	e.mu.Lock()
	e.stopped = true
	api := e.apiserver
	e.apiserver = nil
	e.mu.Unlock()

	var errs []error
	if api != nil {
		errs = append(errs, api.terminate())
	}
	if e.etcd != nil {
		errs = append(errs, e.etcd.terminate())
	}
	for _, c := range []*http.Client{e.kubeHTTP, e.probe} {
		if c != nil {
			utilnet.CloseIdleConnectionsFor(c.Transport)
		}
	}
	if e.etcdAPI != nil {
		e.etcdAPI.http.CloseIdleConnections()
	}
	if err := os.RemoveAll(e.dir); err != nil {
		errs = append(errs, fmt.Errorf("testenv: remove %s: %w", e.dir, err))
	}
	return errors.Join(errs...)
}

// RESTConfig returns a new copy of a client configuration for the apiserver: its URL, the CA
// that signed its serving certificate, and the admin bearer token (a member of
// system:masters). Client-side rate limiting is off (QPS is negative); content type is left
// to the caller. The configuration stays valid across StopAPIServer and StartAPIServer.
func (e *Env) RESTConfig() *rest.Config {
	return rest.CopyConfig(e.config)
}

// Clientset returns a clientset for the apiserver, speaking protobuf, authenticated as the
// admin. It is shared: callers must not change it.
func (e *Env) Clientset() kubernetes.Interface {
	return e.kube
}

// KubeconfigPath is the kubeconfig file holding RESTConfig's cluster, credentials and a
// current context; it is removed by Stop.
func (e *Env) KubeconfigPath() string {
	return filepath.Join(e.dir, "kubeconfig")
}

// EtcdURL is etcd's client URL (plain HTTP on 127.0.0.1).
func (e *Env) EtcdURL() string {
	return e.etcdAPI.url
}

// EtcdLogPath is the file etcd's standard output and error go to; removed by Stop.
func (e *Env) EtcdLogPath() string {
	return filepath.Join(e.dir, "etcd.log")
}

// APIServerLogPath is the file the apiserver's standard output and error go to. Each start
// of the apiserver appends to it after a header line. Removed by Stop.
func (e *Env) APIServerLogPath() string {
	return filepath.Join(e.dir, "kube-apiserver.log")
}
