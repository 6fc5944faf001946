package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/kube"
)

func TestExplainTurnsFailuresIntoActionableErrors(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	refused := &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	for _, tc := range []struct {
		name string
		err  error
		kind error
		want []string
	}{
		{"no config", fmt.Errorf("kube: %w (tried [~/.kube/config])", kube.ErrNoConfig), ErrNoCluster,
			[]string{"no cluster configured", "--kubeconfig", "cd testenv && go run ./cmd/controlplane up", "export KUBECONFIG"}},
		{"unknown", fmt.Errorf("kube: resource %q: %w", "flurbs", &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Resource: "flurbs"}}), ErrUnknownResource,
			[]string{`no resource type "po"`, "short name"}},
		{"forbidden", apierrors.NewForbidden(pods, "", errors.New(`User "bob" cannot list resource "pods"`)), ErrForbidden,
			[]string{"forbidden", `User "bob" cannot list`, "-n NAMESPACE"}},
		{"unauthorized", apierrors.NewUnauthorized("token expired"), ErrUnauthorized,
			[]string{"unauthorized", "https://10.0.0.1:6443", "token expired", "--context"}},
		{"unreachable", fmt.Errorf("kube: discovery: %w", refused), ErrUnreachable,
			[]string{"cannot reach the Kubernetes API server at https://10.0.0.1:6443", "connection refused"}},
	} {
		err := explain(tc.err, "https://10.0.0.1:6443", "po")
		var ue *UserError
		if !errors.As(err, &ue) {
			t.Errorf("%s: %T %v is not a *UserError", tc.name, err, err)
			continue
		}
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: does not match %v", tc.name, tc.kind)
		}
		if !errors.Is(err, errors.Unwrap(tc.err)) && errors.Unwrap(tc.err) != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: the cause is not kept", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err.Error(), w)
			}
		}
	}
	other := errors.New("something else")
	if got := explain(other, "", ""); got != other {
		t.Errorf("an unknown error came back as %v", got)
	}
}

func TestFatalBeforeSync(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	if !fatalBeforeSync(fmt.Errorf("list: %w", apierrors.NewForbidden(pods, "", errors.New("no")))) {
		t.Error("forbidden is retried")
	}
	if fatalBeforeSync(apierrors.NewServiceUnavailable("busy")) {
		t.Error("unavailable is fatal")
	}
}

func TestExecuteWithoutACluster(t *testing.T) {
	var out, errOut bytes.Buffer
	streams := Streams{Out: &out, ErrOut: &errOut}
	err := Execute(context.Background(), streams, []string{"get", "pods", "--kubeconfig", filepath.Join(t.TempDir(), "missing")})
	if !errors.Is(err, ErrNoCluster) {
		t.Errorf("err %v, want ErrNoCluster", err)
	}
	if got := FormatError(err); !strings.HasPrefix(got, "error: cannot read the kubeconfig file") {
		t.Errorf("printed %q", got)
	}
	if err := Execute(context.Background(), streams, []string{"--help"}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"watch", "get", "stats"} {
		if !strings.Contains(out.String(), cmd) {
			t.Errorf("help does not list %s:\n%s", cmd, out.String())
		}
	}
	if err := Execute(context.Background(), streams, []string{"watch"}); err == nil {
		t.Error("watch without a resource accepted")
	}
}

func TestBadSelectorsAreReportedBeforeConnecting(t *testing.T) {
	// No cluster is configured at all: the selector is checked first.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", "pods", "-l", "app=(web"}, []string{`bad -l/--selector: label selector "app=(web": unable to parse requirement`, "env in (prod,staging)"}},
		{[]string{"watch", "pods", "--selector", "tier in web"}, []string{`label selector "tier in web"`}},
		{[]string{"stats", "pods", "--field-selector", "status.phase=Running,x"}, []string{`bad --field-selector: field selector "status.phase=Running,x"`, "status.phase=Running,spec.nodeName=n1"}},
	} {
		var out, errOut bytes.Buffer
		err := Execute(context.Background(), Streams{Out: &out, ErrOut: &errOut}, tc.args)
		if !errors.Is(err, ErrBadSelector) {
			t.Errorf("%q: err %v, want ErrBadSelector", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(FormatError(err), w) {
				t.Errorf("%q: %q lacks %q", tc.args, FormatError(err), w)
			}
		}
		if out.Len()+errOut.Len() != 0 {
			t.Errorf("%q printed %q %q", tc.args, out.String(), errOut.String())
		}
	}
}

func TestKubeconfigEnvNamingMissingFilesIsNamed(t *testing.T) {
	dir := t.TempDir()
	missing, empty := filepath.Join(dir, "missing"), filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dir)
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a pod
	for _, tc := range []struct {
		env  string
		want string
	}{
		{missing, "$KUBECONFIG=" + missing + ", but " + missing + " does not exist"},
		{missing + string(filepath.ListSeparator) + empty, missing + " does not exist; " + empty + " is empty"},
	} {
		t.Setenv("KUBECONFIG", tc.env)
		err := Execute(context.Background(), Streams{Out: io.Discard, ErrOut: io.Discard}, []string{"get", "pods"})
		if !errors.Is(err, ErrNoCluster) {
			t.Errorf("KUBECONFIG=%s: err %v, want ErrNoCluster", tc.env, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "unset it") {
			t.Errorf("KUBECONFIG=%s: %q lacks %q", tc.env, err.Error(), tc.want)
		}
	}
}
