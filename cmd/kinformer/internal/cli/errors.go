package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
)

// UserError is an error a person can act on: Message says what is wrong and
// what to do; Err is the cause, kept for errors.Is/As.
type UserError struct {
	Message string
	Err     error
}

func (e *UserError) Error() string { return e.Message }
func (e *UserError) Unwrap() error { return e.Err }

// Error kinds, matched with errors.Is on a *UserError's chain.
var (
	ErrNoCluster       = errors.New("no cluster configured")
	ErrUnreachable     = errors.New("cluster unreachable")
	ErrUnknownResource = errors.New("unknown resource")
	ErrForbidden       = errors.New("forbidden")
	ErrUnauthorized    = errors.New("unauthorized")
	ErrBadSelector     = errors.New("bad selector")
)

// validateSelectors checks -l and --field-selector before anything
// connects, so that a typo is reported as one, naming the flag and the
// selector, and not as a failing watch.
func validateSelectors(label, field string) error {
	if err := (kube.Selection{LabelSelector: label}).Validate(); err != nil {
		return kindError(ErrBadSelector, err,
			"bad -l/--selector: %v\n"+
				"A label selector is requirements separated by commas, such as app=web, tier!=db, env in (prod,staging), !legacy.", err)
	}
	if err := (kube.Selection{FieldSelector: field}).Validate(); err != nil {
		return kindError(ErrBadSelector, err,
			"bad --field-selector: %v\n"+
				"A field selector is field=value or field!=value pairs separated by commas, such as status.phase=Running,spec.nodeName=n1.", err)
	}
	return nil
}

// kubeconfigEnvProblem says what is wrong with the files $KUBECONFIG
// names when none of them could be used ("" when it is not set, or names a
// file that exists and is not empty).
func kubeconfigEnvProblem() string {
	env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	if env == "" {
		return ""
	}
	var problems []string
	for _, path := range filepath.SplitList(env) {
		if path == "" {
			continue
		}
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, fmt.Sprintf("%s does not exist", path))
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s cannot be read: %v", path, err))
		case fi.IsDir():
			problems = append(problems, fmt.Sprintf("%s is a directory", path))
		case fi.Size() == 0:
			problems = append(problems, fmt.Sprintf("%s is empty", path))
		default:
			return ""
		}
	}
	if len(problems) == 0 {
		return ""
	}
	return strings.Join(problems, "; ")
}

// kindError is a UserError that also matches kind.
func kindError(kind error, cause error, format string, args ...any) error {
	return &UserError{Message: fmt.Sprintf(format, args...), Err: errors.Join(kind, cause)}
}

// explain turns err, from talking to the cluster at host about resource
// (which may be empty), into a *UserError when it is one of the failures a
// person can fix; other errors come back unchanged.
func explain(err error, host, resource string) error {
	if err == nil {
		return nil
	}
	var ue *UserError
	if errors.As(err, &ue) {
		return err
	}
	what := "resources"
	if resource != "" {
		what = fmt.Sprintf("%q", resource)
	}
	switch {
	case errors.Is(err, kube.ErrNoConfig) && kubeconfigEnvProblem() != "":
		return kindError(ErrNoCluster, err,
			"no cluster configured: $KUBECONFIG=%s, but %s.\n"+
				"Point $KUBECONFIG (or --kubeconfig) at a kubeconfig file, or unset it to use ~/.kube/config.",
			os.Getenv(clientcmd.RecommendedConfigPathEnvVar), kubeconfigEnvProblem())
	case errors.Is(err, kube.ErrNoConfig):
		return kindError(ErrNoCluster, err,
			"no cluster configured: kinformer looked for --kubeconfig, $KUBECONFIG, ~/.kube/config and an in-cluster service account, and found none.\n"+
				"Point --kubeconfig (or $KUBECONFIG) at a kubeconfig file. For a local control plane, in a clone of the kinformer repository run\n"+
				"  cd testenv && go run ./cmd/controlplane up\n"+
				"and, in another shell, the export KUBECONFIG=... line it prints.")
	case apierrors.IsBadRequest(err) && strings.Contains(serverMessage(err), "field label"):
		// The server checks field selectors per resource: a selector that
		// parses may still name a field the resource cannot be selected by.
		return kindError(ErrBadSelector, err,
			"the server cannot select %s by --field-selector: %s\n"+
				"Each resource supports its own fields (every one supports metadata.name and metadata.namespace; pods also status.phase, spec.nodeName, ...); use -l for labels.",
			what, serverMessage(err))
	case meta.IsNoMatchError(err):
		return kindError(ErrUnknownResource, err,
			"the server has no resource type %s: use a plural, singular, kind or short name the server lists (as in `kubectl api-resources`), for example pods, pod, Pod or po", what)
	case apierrors.IsForbidden(err):
		return kindError(ErrForbidden, err,
			"forbidden: the server refused to let you list or watch %s: %s\n"+
				"Ask for list and watch permission on it, or narrow the request (-n NAMESPACE instead of -A).", what, serverMessage(err))
	case apierrors.IsUnauthorized(err):
		return kindError(ErrUnauthorized, err,
			"unauthorized: the server at %s did not accept your credentials: %s\n"+
				"Log in again, or pick another --context or --kubeconfig.", host, serverMessage(err))
	case apierrors.IsMethodNotSupported(err):
		return &UserError{Message: fmt.Sprintf("the server does not allow listing and watching %s, so it cannot be cached: %s", what, serverMessage(err)), Err: err}
	case unreachable(err):
		return kindError(ErrUnreachable, err,
			"cannot reach the Kubernetes API server at %s: %s\n"+
				"Is the cluster running, and are --context and --kubeconfig the ones you meant?", host, rootCause(err))
	}
	return err
}

// unreachable reports whether err means nothing answered at the server's
// address (refused, no route, DNS, TLS handshake to nowhere).
func unreachable(err error) bool {
	if errors.Is(err, listwatch.ErrUnavailable) {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "no such host", "i/o timeout", "no route to host", "network is unreachable"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func serverMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}

// rootCause is the part of a network failure a person needs ("dial tcp
// 127.0.0.1:1: connect: connection refused"), or err's message.
func rootCause(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// fatalBeforeSync reports whether an informer error seen before the first
// sync will not go away by retrying, so the command should stop and say so.
func fatalBeforeSync(err error) bool {
	if errors.Is(err, listwatch.ErrStreamingListUnsupported) {
		// A server without streaming lists (before 1.34, or the WatchList
		// gate off) refuses sendInitialEvents with 422: the informer lists
		// instead.
		return false
	}
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) ||
		apierrors.IsNotFound(err) || apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) ||
		apierrors.IsMethodNotSupported(err)
}
