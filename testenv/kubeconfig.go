package testenv

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigName names the cluster, user and context in the kubeconfig testenv writes.
const kubeconfigName = "kinformer-testenv"

// writeKubeconfig writes a kubeconfig for cfg (host, CA data, bearer token) with a current
// context, so kubectl and clientcmd-based tools work with KUBECONFIG set to path.
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[kubeconfigName] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[kubeconfigName] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[kubeconfigName] = &clientcmdapi.Context{
		Cluster:   kubeconfigName,
		AuthInfo:  kubeconfigName,
		Namespace: "default",
	}
	kc.CurrentContext = kubeconfigName
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("testenv: write kubeconfig: %w", err)
	}
	return nil
}
