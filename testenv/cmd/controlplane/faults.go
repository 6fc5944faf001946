package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// faulter is what a fault needs of the running control plane; *testenv.Env
// is one.
type faulter interface {
	StopAPIServer(ctx context.Context) error
	StartAPIServer(ctx context.Context) error
	CompactEtcd(ctx context.Context) (int64, error)
}

// faults names the faults a person can cause, as subcommands of
// controlplane, as paths of the control socket and as words typed while
// `up` runs.
var faults = []struct {
	name, key, help string
}{
	{"restart-apiserver", "r", "stop the apiserver (SIGTERM, as in a rolling restart) and start it again; -down DURATION keeps it down that long"},
	{"stop-apiserver", "", "stop the apiserver, leaving etcd and its data; clients see connection refused"},
	{"start-apiserver", "", "start the stopped apiserver on the same port with the same credentials"},
	{"compact", "c", "compact etcd's history up to now: lists and watches from older resource versions get 410 Gone"},
}

// faultRunner carries out faults on a control plane, one at a time, telling
// what happens to each caller's writer and to log.
type faultRunner struct {
	env faulter
	// log is `up`'s own output, where every fault is recorded too.
	log io.Writer
	now func() time.Time

	// mu makes faults run one at a time and guards log.
	mu sync.Mutex
}

// run carries out the fault called name, writing what happens to w.
func (f *faultRunner) run(ctx context.Context, name string, down time.Duration, w io.Writer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	say := func(format string, args ...any) {
		line := f.now().Format("15:04:05") + " " + fmt.Sprintf(format, args...) + "\n"
		io.WriteString(w, line)
		if f.log != w {
			io.WriteString(f.log, line)
		}
	}
	switch name {
	case "restart-apiserver", "stop-apiserver":
		start := f.now()
		if err := f.env.StopAPIServer(ctx); err != nil {
			return err
		}
		say("apiserver stopped: clients get connection refused")
		if name == "stop-apiserver" {
			say("start it with `go run ./cmd/controlplane start-apiserver` (or type start here)")
			return nil
		}
		if down > 0 {
			say("keeping it down for %s", down)
			t := time.NewTimer(down)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := f.env.StartAPIServer(ctx); err != nil {
			return err
		}
		say("apiserver ready again, %s after it stopped", f.now().Sub(start).Round(100*time.Millisecond))
	case "start-apiserver":
		if err := f.env.StartAPIServer(ctx); err != nil {
			return err
		}
		say("apiserver ready")
	case "compact":
		rev, err := f.env.CompactEtcd(ctx)
		if err != nil {
			return err
		}
		say("etcd compacted at revision %d: lists and watches from older resource versions get 410 Gone once they reach etcd", rev)
		say("(with the watch cache on, the apiserver keeps serving watches from its own history: restart-apiserver next, or run up with -disable-watch-cache, for watches to see it)")
	default:
		return fmt.Errorf("unknown fault %q", name)
	}
	return nil
}

// controlSocketName is the control socket's file name, next to the
// kubeconfig `up` writes.
const controlSocketName = "control.sock"

// wellKnownSocket is where `up` also listens when no other `up` does, so
// that the fault commands find it with no flag and no $KUBECONFIG.
func wellKnownSocket() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("kinformer-controlplane-%d.sock", os.Getuid()))
}

// serveFaults serves the fault runner on unix sockets at paths (those it
// can listen on; the first must work) until ctx is done, and returns the
// paths served and a function that stops serving and waits for every
// goroutine started here.
func serveFaults(ctx context.Context, f *faultRunner, paths []string) ([]string, func(), error) {
	mux := http.NewServeMux()
	for _, fault := range faults {
		mux.HandleFunc("POST /"+fault.name, func(w http.ResponseWriter, r *http.Request) {
			down, err := time.ParseDuration(cmpOr(r.URL.Query().Get("down"), "0s"))
			if err != nil {
				http.Error(w, "down: "+err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fw := &flushWriter{w: w}
			if err := f.run(r.Context(), fault.name, down, fw); err != nil {
				fmt.Fprintf(fw, "error: %v\n", err)
			}
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var served []string
	var listeners []net.Listener
	for i, p := range paths {
		// A socket file left by a process that is gone is in the way.
		if c, err := net.Dial("unix", p); err == nil {
			c.Close()
			if i == 0 {
				return nil, nil, fmt.Errorf("control socket %s: another control plane is serving it", p)
			}
			continue // another `up` holds the well-known path: fine
		}
		os.Remove(p)
		ln, err := net.Listen("unix", p)
		if err != nil {
			if i == 0 {
				return nil, nil, fmt.Errorf("control socket: %w", err)
			}
			continue
		}
		served = append(served, p)
		listeners = append(listeners, ln)
	}
	var wg sync.WaitGroup
	for _, ln := range listeners {
		// Owned by the stop function, which shuts the server down.
		wg.Go(func() { _ = srv.Serve(ln) })
	}
	stopped := make(chan struct{})
	// Ends when ctx is done or stop is called.
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-stopped:
		}
		srv.Close()
	})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			close(stopped)
			wg.Wait()
			for _, p := range served {
				os.Remove(p)
			}
		})
	}
	return served, stop, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// flushWriter writes a response line by line as it is produced.
type flushWriter struct{ w http.ResponseWriter }

func (f *flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

// findSocket picks the control socket of the running `up`: the one given,
// else the one next to $KUBECONFIG (which `up` tells you to export), else
// the well-known one.
func findSocket(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	var tried []string
	if kc := os.Getenv("KUBECONFIG"); kc != "" {
		for _, p := range filepath.SplitList(kc) {
			s := filepath.Join(filepath.Dir(p), controlSocketName)
			if _, err := os.Stat(s); err == nil {
				return s, nil
			}
			tried = append(tried, s)
		}
	}
	s := wellKnownSocket()
	if _, err := os.Stat(s); err == nil {
		return s, nil
	}
	tried = append(tried, s)
	return "", fmt.Errorf("no running control plane found (looked for %s): start one with `go run ./cmd/controlplane up`, or pass -socket", strings.Join(tried, ", "))
}

// requestFault is a fault subcommand: it asks the running `up` to carry
// out the fault and copies what it says to stdout.
func requestFault(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "the control socket of the running `up` (default: next to $KUBECONFIG, else "+wellKnownSocket()+")")
	down := time.Duration(0)
	if name == "restart-apiserver" {
		fs.DurationVar(&down, "down", 0, "keep the apiserver stopped this long before starting it again")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	path, err := findSocket(*socket)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://controlplane/"+name+"?down="+down.String(), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("control socket %s: %w (is `controlplane up` still running?)", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	failed := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "error: ") {
			failed = true
		}
		fmt.Fprintln(stdout, line)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if failed {
		return errors.New(name + " failed")
	}
	return nil
}

// keyHelp is printed by `up` when its input is a terminal.
func keyHelp() string {
	var b strings.Builder
	b.WriteString("faults (type a word and Enter here, or run `go run ./cmd/controlplane WORD` in another shell):\n")
	for _, f := range faults {
		key := ""
		if f.key != "" {
			key = " (" + f.key + ")"
		}
		fmt.Fprintf(&b, "  %-22s %s\n", f.name+key, f.help)
	}
	return b.String()
}

// readKeys reads words from in, one per line, and carries out the faults
// they name (a fault's name, its key, or its name without "-apiserver"),
// until in ends or ctx is done. It returns when in ends; a caller whose in
// never ends (a terminal) does not wait for it.
func readKeys(ctx context.Context, in io.Reader, f *faultRunner, out io.Writer) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		word := strings.TrimSpace(sc.Text())
		if word == "" {
			continue
		}
		name := ""
		for _, fault := range faults {
			if word == fault.name || word == fault.key || word == strings.TrimSuffix(fault.name, "-apiserver") {
				name = fault.name
			}
		}
		if name == "" {
			fmt.Fprint(out, keyHelp())
			continue
		}
		if err := f.run(ctx, name, 0, out); err != nil {
			fmt.Fprintf(out, "%s: %v\n", name, err)
		}
		if ctx.Err() != nil {
			return
		}
	}
}
