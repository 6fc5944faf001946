package cli

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Flag values that make no sense are refused before the server is asked,
// and kubectl's flags people type out of habit are accepted.
func TestFlagValuesAreChecked(t *testing.T) {
	global := fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("asked the server %s", r.URL)
		http.Error(w, "no", http.StatusInternalServerError)
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "pods", "--interval", "0"}, "--interval 0s"},
		{[]string{"stats", "pods", "--interval", "-1s"}, "must be positive"},
		{[]string{"stats", "pods", "--duration", "-1s"}, "--duration -1s"},
		{[]string{"watch", "pods", "--duration", "-1s"}, "--duration -1s"},
		{[]string{"get", "pods", "-w", "--sort-by", ".metadata.name"}, "cannot --sort-by"},
		{[]string{"get", "pods", "web-0", "-w"}, "--field-selector metadata.name=web-0"},
	} {
		err := Execute(t.Context(), Streams{Out: io.Discard, ErrOut: io.Discard}, append(tc.args, "--kubeconfig", global.Kubeconfig))
		var ue *UserError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a user error saying %q", tc.args, err, tc.want)
		}
	}
}

func TestKubectlFlagsAreAccepted(t *testing.T) {
	for _, args := range [][]string{
		{"get", "pods", "--chunk-size", "100"},
		{"get", "pods", "-w"},
		{"watch", "pods", "--chunk-size", "0"},
		{"stats", "pods", "--chunk-size", "500"},
	} {
		cmd := NewCommand(Streams{Out: io.Discard, ErrOut: io.Discard})
		sub, rest, err := cmd.Find(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := sub.ParseFlags(rest); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	// The help names no value after -w: a boolean.
	cmd := NewCommand(Streams{Out: io.Discard, ErrOut: io.Discard})
	get, _, _ := cmd.Find([]string{"get"})
	if u := get.Flags().FlagUsages(); !strings.Contains(u, "-w, --watch  ") && !strings.Contains(u, "-w, --watch ") {
		t.Errorf("get -w help:\n%s", u)
	}
}

// --context with a name the kubeconfig lacks names the contexts it has,
// without "kube: loading kubeconfig" in front.
func TestUnknownContextNamesTheContexts(t *testing.T) {
	global := fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("asked the server %s", r.URL)
	})
	err := Execute(t.Context(), Streams{Out: io.Discard, ErrOut: io.Discard},
		[]string{"get", "pods", "--context", "nosuch", "--kubeconfig", global.Kubeconfig})
	var ue *UserError
	if !errors.As(err, &ue) || !errors.Is(err, ErrNoCluster) {
		t.Fatalf("--context nosuch: %v, want a user error", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, `--context "nosuch"`) || !strings.Contains(msg, "it has: fake") ||
		strings.Contains(msg, "kube:") || !strings.Contains(msg, "current context, fake") {
		t.Errorf("message %q", msg)
	}
}

// A field selector the server refuses for the resource is explained as
// --field-selector's fault, not as a failing watch.
func TestFieldSelectorTheServerRefusesNamesTheFlag(t *testing.T) {
	global := fakeCluster(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"field label not supported: spec.color","reason":"BadRequest","code":400}`)
	})
	for _, verb := range []string{"get", "watch"} {
		err := Execute(t.Context(), Streams{Out: io.Discard, ErrOut: io.Discard},
			[]string{verb, "pods", "--field-selector", "spec.color=red", "--kubeconfig", global.Kubeconfig})
		if !errors.Is(err, ErrBadSelector) || !strings.Contains(err.Error(), "--field-selector") ||
			!strings.Contains(err.Error(), "field label not supported: spec.color") || strings.Contains(err.Error(), "watch start") {
			t.Errorf("%s: %v, want a bad-selector error naming --field-selector and the server's reason", verb, err)
		}
	}
}
