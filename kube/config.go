package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kinformer/kinformer/internal/listquery"
)

// ErrNoConfig is wrapped by LoadConfig's error when no configuration was
// found anywhere it looked.
var ErrNoConfig = errors.New("no Kubernetes configuration found")

// ConfigOptions say where LoadConfig looks. The zero value follows the
// usual order with the kubeconfig's current context.
type ConfigOptions struct {
	// Kubeconfig is an explicit kubeconfig path (typically a --kubeconfig
	// flag). When set, it must exist and nothing else is tried.
	Kubeconfig string
	// Context selects a kubeconfig context other than the current one.
	Context string
}

// LoadConfig returns the configuration to reach a cluster, from the first
// of, in order:
//
//  1. opts.Kubeconfig, when set;
//  2. the files listed in $KUBECONFIG (merged as kubectl merges them);
//  3. $HOME/.kube/config, when it exists;
//  4. the in-cluster service account of a pod.
//
// When none is there the error wraps ErrNoConfig and says what was tried.
// QPS and Burst left at zero by the kubeconfig are set to 50 and 100,
// which suit informers that list many resources at start (client-go's own
// 5 and 10 starve them).
func LoadConfig(opts ConfigOptions) (*rest.Config, error) {
	var tried []string
	rules := &clientcmd.ClientConfigLoadingRules{}
	switch env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); {
	case opts.Kubeconfig != "":
		rules.ExplicitPath = opts.Kubeconfig
	case env != "":
		rules.Precedence = filepath.SplitList(env)
		tried = append(tried, "$KUBECONFIG ("+env+")")
	default:
		if home, err := os.UserHomeDir(); err == nil {
			path := filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
			tried = append(tried, path)
			if _, err := os.Stat(path); err == nil {
				rules.Precedence = []string{path}
			}
		}
	}
	if rules.ExplicitPath != "" || len(rules.Precedence) > 0 {
		overrides := &clientcmd.ConfigOverrides{CurrentContext: opts.Context}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		switch {
		case err == nil:
			return withDefaults(cfg), nil
		case rules.ExplicitPath != "" || !clientcmd.IsEmptyConfig(err):
			return nil, fmt.Errorf("kube: loading kubeconfig: %w", err)
		}
		// $KUBECONFIG named only missing or empty files: go on.
	}
	tried = append(tried, "in-cluster service account")
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("kube: %w (tried %v): %w", ErrNoConfig, tried, err)
	}
	return withDefaults(cfg), nil
}

func withDefaults(cfg *rest.Config) *rest.Config {
	if cfg.QPS == 0 && cfg.Burst == 0 {
		cfg.QPS, cfg.Burst = listquery.DefaultQPS, listquery.DefaultBurst
	}
	return cfg
}
