package kubetest

import "k8s.io/apimachinery/pkg/runtime/schema"

// shortNames are the short names kube-apiserver publishes for the common
// built-in resources (kubectl api-resources), so that "po" or "deploy"
// resolve as on a real cluster.
var shortNames = map[schema.GroupResource][]string{
	{Resource: "componentstatuses"}:      {"cs"},
	{Resource: "configmaps"}:             {"cm"},
	{Resource: "endpoints"}:              {"ep"},
	{Resource: "events"}:                 {"ev"},
	{Resource: "limitranges"}:            {"limits"},
	{Resource: "namespaces"}:             {"ns"},
	{Resource: "nodes"}:                  {"no"},
	{Resource: "persistentvolumeclaims"}: {"pvc"},
	{Resource: "persistentvolumes"}:      {"pv"},
	{Resource: "pods"}:                   {"po"},
	{Resource: "replicationcontrollers"}: {"rc"},
	{Resource: "resourcequotas"}:         {"quota"},
	{Resource: "serviceaccounts"}:        {"sa"},
	{Resource: "services"}:               {"svc"},

	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: {"crd", "crds"},
	{Group: "apps", Resource: "daemonsets"}:                                {"ds"},
	{Group: "apps", Resource: "deployments"}:                               {"deploy"},
	{Group: "apps", Resource: "replicasets"}:                               {"rs"},
	{Group: "apps", Resource: "statefulsets"}:                              {"sts"},
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}:           {"hpa"},
	{Group: "batch", Resource: "cronjobs"}:                                 {"cj"},
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: {"csr"},
	{Group: "events.k8s.io", Resource: "events"}:                           {"ev"},
	{Group: "networking.k8s.io", Resource: "ingresses"}:                    {"ing"},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}:              {"netpol"},
	{Group: "policy", Resource: "poddisruptionbudgets"}:                    {"pdb"},
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:              {"pc"},
	{Group: "storage.k8s.io", Resource: "storageclasses"}:                  {"sc"},
}

// fieldLabels are the field selectors kube-apiserver supports for a few
// built-in resources beyond metadata.name and metadata.namespace (which
// every resource supports). A field selector naming another field is
// refused with 400 Bad Request, as the apiserver refuses it.
var fieldLabels = map[schema.GroupResource][]string{
	{Resource: "pods"}: {
		"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
		"spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName",
	},
	{Resource: "events"}: {
		"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
		"reason", "reportingComponent", "type",
	},
	{Resource: "namespaces"}: {"status.phase"},
	{Resource: "nodes"}:      {"spec.unschedulable"},
	{Resource: "secrets"}:    {"type"},
}
