package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A get interrupted while it syncs exits non-zero (130 for SIGINT, 143
// for SIGTERM), so that `kinformer get … > f && use f` never takes an
// empty file for success; watch and stats, which run until interrupted,
// end without an error.
func TestInterruptedGetFailsAndWatchEndsCleanly(t *testing.T) {
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
		code int // 0: no error
	}{
		{[]string{"get", "pods"}, syscall.SIGINT, 130},
		{[]string{"get", "pods", "-o", "json"}, syscall.SIGTERM, 143},
		{[]string{"get", "pods", "-o", "name"}, syscall.SIGINT, 130},
		{[]string{"watch", "pods"}, syscall.SIGINT, 0},
		{[]string{"stats", "pods"}, syscall.SIGTERM, 0},
	} {
		var once sync.Once
		asked := make(chan struct{})
		// The server takes every list and watch and never answers: the
		// sync goes on until the signal.
		global := fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
			once.Do(func() { close(asked) })
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancelCause(t.Context())
		go func() {
			select {
			case <-asked:
				cancel(&InterruptedError{Signal: tc.sig})
			case <-time.After(time.Minute):
				cancel(errors.New("the command never asked the server"))
			}
		}()
		args := append(tc.args, "--kubeconfig", global.Kubeconfig)
		err := Execute(ctx, Streams{Out: io.Discard, ErrOut: io.Discard}, args)
		var ie *InterruptedError
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%v interrupted: %v, want no error", tc.args, err)
		case tc.code != 0 && !errors.As(err, &ie):
			t.Errorf("%v interrupted: %v, want an InterruptedError", tc.args, err)
		case tc.code != 0 && ie.ExitCode() != tc.code:
			t.Errorf("%v interrupted by %v: exit code %d, want %d (%v)", tc.args, tc.sig, ie.ExitCode(), tc.code, err)
		}
		cancel(nil)
	}
}

func TestInterruptedErrorSaysWhichSignal(t *testing.T) {
	if got := (&InterruptedError{Signal: syscall.SIGINT}).Error(); got != "interrupted by SIGINT (Ctrl-C) before the output was complete" {
		t.Errorf("SIGINT: %q", got)
	}
	if e := (&InterruptedError{}); e.ExitCode() != 1 {
		t.Errorf("no signal: exit code %d, want 1", e.ExitCode())
	}
}

// get NAME -A is refused before anything is asked of the server: a name
// is unique only within a namespace.
func TestGetByNameAcrossNamespacesIsRefused(t *testing.T) {
	global := fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("asked the server %s", r.URL)
		http.Error(w, "no", http.StatusInternalServerError)
	})
	err := Execute(t.Context(), Streams{Out: io.Discard, ErrOut: io.Discard},
		[]string{"get", "pods", "web-5", "-A", "--kubeconfig", global.Kubeconfig})
	var ue *UserError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "-n NAMESPACE") {
		t.Errorf("get pods web-5 -A: %v, want a user error pointing to -n", err)
	}
}

// get NAME asks the server for that object alone (a field selector on
// metadata.name, with the user's own), not for the whole namespace.
func TestGetByNameSelectsTheObject(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "pods", "web-5", "-n", "shop"}, "metadata.name=web-5"},
		{[]string{"get", "pods", "web-5", "-n", "shop", "-o", "name"}, "metadata.name=web-5"},
		{[]string{"get", "pods", "web-5", "-n", "shop", "--field-selector", "status.phase=Running"}, "status.phase=Running,metadata.name=web-5"},
	} {
		var once sync.Once
		got := make(chan string, 1)
		global := fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
			once.Do(func() { got <- r.URL.Query().Get("fieldSelector") })
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- Execute(ctx, Streams{Out: io.Discard, ErrOut: io.Discard}, append(tc.args, "--kubeconfig", global.Kubeconfig))
		}()
		select {
		case sel := <-got:
			if sel != tc.want {
				t.Errorf("%v: fieldSelector %q, want %q", tc.args, sel, tc.want)
			}
		case <-time.After(time.Minute):
			t.Errorf("%v: never asked the server", tc.args)
		}
		cancel()
		<-done
	}
}

// Piped, get prints its output and nothing else: no "synced" report on
// stderr (a terminal gets one, where the progress bars were).
func TestGetPipedSaysNothingOnStderr(t *testing.T) {
	global := fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
			// A server without streaming lists: the informer lists.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"sendInitialEvents is forbidden","reason":"Invalid","code":422}`)
			return
		case q.Get("watch") == "true":
			<-r.Context().Done() // a watch that stays open
			return
		}
		metadataList([]string{"a", "b"}, []types.UID{"u1", "u2"})(w, r)
	})
	var out, errOut strings.Builder
	if err := Execute(t.Context(), Streams{Out: &out, ErrOut: &errOut}, []string{"get", "pods", "-A", "-o", "name", "--kubeconfig", global.Kubeconfig}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "pod/o-a\npod/o-b\n" {
		t.Errorf("stdout %q", out.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr, piped: %q, want nothing", errOut.String())
	}
}
