package kubetest

import "k8s.io/apimachinery/pkg/runtime/schema"

// clusterScoped lists the built-in kinds that are not namespaced. It is
// kube's table (kube/builtin.go), which mirrors the +genclient:nonNamespaced
// tags of k8s.io/api v0.37 and the scope the apiserver's discovery reports;
// kube keeps it unexported, so it is repeated here. A kind missing from it
// is served as namespaced.
var clusterScoped = map[schema.GroupKind]bool{
	{Group: "", Kind: "ComponentStatus"}:  true,
	{Group: "", Kind: "Namespace"}:        true,
	{Group: "", Kind: "Node"}:             true,
	{Group: "", Kind: "PersistentVolume"}: true,

	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,

	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:             true,

	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}: true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:        true,

	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                 true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}: true,

	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}: true,

	{Group: "networking.k8s.io", Kind: "IPAddress"}:    true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}: true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:  true,

	{Group: "node.k8s.io", Kind: "RuntimeClass"}: true,

	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,

	{Group: "resource.k8s.io", Kind: "DeviceClass"}:               true,
	{Group: "resource.k8s.io", Kind: "DeviceTaintRule"}:           true,
	{Group: "resource.k8s.io", Kind: "ResourcePoolStatusRequest"}: true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:             true,

	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: true,

	{Group: "storage.k8s.io", Kind: "CSIDriver"}:             true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:               true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:          true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:      true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}: true,

	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}: true,
}

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
