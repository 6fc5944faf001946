package kubetest_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/ptr"

	"github.com/kinformer/kinformer/kube/kubetest"
)

// A clientset's create, get, update, patch and delete, with the
// apiserver's rules on versions, conflicts and generation.
func TestClientsetWrites(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	c := ctx(t)
	deploys := clientset(t, srv).AppsV1().Deployments("shop")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Labels: map[string]string{"app": "web"}},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
	}
	created, err := deploys.Create(c, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Name) != len("web-")+5 || created.Namespace != "shop" || created.UID == "" ||
		created.ResourceVersion == "" || created.Generation != 1 || created.CreationTimestamp.IsZero() {
		t.Fatalf("created %+v, want a generated name in shop with uid, version, generation 1 and a creation time", created.ObjectMeta)
	}
	name := created.Name
	if _, err := deploys.Create(c, created, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) && !apierrors.IsAlreadyExists(err) {
		t.Errorf("create again: %v, want an error", err)
	}

	// A stale version conflicts; an unchanged object is no write.
	stale := created.DeepCopy()
	created.Spec.Replicas = ptr.To[int32](3)
	updated, err := deploys.Update(c, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Generation != 2 || updated.ResourceVersion == created.ResourceVersion || updated.UID != created.UID {
		t.Errorf("updated spec: generation %d, version %s (was %s), uid %s: want generation 2, a new version, the same uid",
			updated.Generation, updated.ResourceVersion, created.ResourceVersion, updated.UID)
	}
	stale.Spec.Replicas = ptr.To[int32](5)
	if _, err := deploys.Update(c, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update from a stale version: %v, want 409 Conflict", err)
	}
	same, err := deploys.Update(c, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != updated.ResourceVersion {
		t.Errorf("unchanged update moved the version from %s to %s", updated.ResourceVersion, same.ResourceVersion)
	}

	// Status writes change status only, and leave generation alone.
	updated.Status.ReadyReplicas = 3
	updated.Labels["ignored"] = "yes"
	st, err := deploys.UpdateStatus(c, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status.ReadyReplicas != 3 || st.Labels["ignored"] != "" || st.Generation != 2 {
		t.Errorf("status update: ready %d, labels %v, generation %d; want 3, no new label, 2", st.Status.ReadyReplicas, st.Labels, st.Generation)
	}

	// Patches: merge, JSON and strategic merge.
	for _, p := range []struct {
		typ  types.PatchType
		data string
	}{
		{types.MergePatchType, `{"metadata":{"labels":{"merge":"1"}}}`},
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/json","value":"1"}]`},
		{types.StrategicMergePatchType, `{"metadata":{"labels":{"strategic":"1"}}}`},
	} {
		if _, err := deploys.Patch(c, name, p.typ, []byte(p.data), metav1.PatchOptions{}); err != nil {
			t.Errorf("%s: %v", p.typ, err)
		}
	}
	got, err := deploys.Get(c, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels["merge"] != "1" || got.Labels["json"] != "1" || got.Labels["strategic"] != "1" || got.Labels["app"] != "web" {
		t.Errorf("labels after patches %v", got.Labels)
	}
	if _, err := deploys.Patch(c, name, types.ApplyPatchType, []byte(`{}`), metav1.PatchOptions{FieldManager: "t"}); !apierrors.IsUnsupportedMediaType(err) {
		t.Errorf("server-side apply: %v, want 415", err)
	}

	// Delete, with preconditions.
	err = deploys.Delete(c, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("other"))}})
	if !apierrors.IsConflict(err) {
		t.Errorf("delete with another uid: %v, want 409 Conflict", err)
	}
	if err := deploys.Delete(c, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := deploys.Get(c, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want 404", err)
	}
	if err := deploys.Delete(c, name, metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete again: %v, want 404", err)
	}
}

// Custom resources through the dynamic client, metadata through the
// metadata client.
func TestDynamicAndMetadataClients(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{CustomResources: []kubetest.CustomResource{widgets}})
	c := ctx(t)
	dc, err := dynamic.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "labels": map[string]any{"size": "big"}},
		"spec":     map[string]any{"color": "red"},
	}}
	created, err := dc.Resource(widgets.GVR).Namespace("team").Create(c, w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetNamespace() != "team" || created.GetResourceVersion() == "" {
		t.Errorf("created %v", created.Object)
	}
	patched, err := dc.Resource(widgets.GVR).Namespace("team").Patch(c, "w1", types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if color, _, _ := unstructured.NestedString(patched.Object, "spec", "color"); color != "blue" || patched.GetGeneration() != 2 {
		t.Errorf("patched spec.color %q, generation %d; want blue, 2", color, patched.GetGeneration())
	}
	if _, err := dc.Resource(widgets.GVR).Namespace("team").Patch(c, "w1", types.StrategicMergePatchType, []byte(`{}`), metav1.PatchOptions{}); !apierrors.IsUnsupportedMediaType(err) {
		t.Errorf("strategic merge patch of a custom resource: %v, want 415", err)
	}
	wrongKind := w.DeepCopy()
	wrongKind.SetKind("Gadget")
	if _, err := dc.Resource(widgets.GVR).Namespace("team").Create(c, wrongKind, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("create of another kind: %v, want 400", err)
	}

	mc, err := metadata.NewForConfig(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	l, err := mc.Resource(widgets.GVR).Namespace("").List(c, metav1.ListOptions{LabelSelector: "size=big"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Name != "w1" || l.Items[0].Labels["size"] != "big" {
		t.Errorf("metadata list %+v, want w1", l.Items)
	}
	if err := mc.Resource(widgets.GVR).Namespace("team").Delete(c, "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Create, Update and Delete write directly and update the caller's object.
func TestDirectWrites(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{CustomResources: []kubetest.CustomResource{widgets}})
	c := ctx(t)
	p := pod("ns", "a", nil)
	if err := srv.Create(p); err != nil {
		t.Fatal(err)
	}
	if p.ResourceVersion != srv.ResourceVersion() || p.UID == "" {
		t.Errorf("created pod at %q with uid %q, want the server's version %s and a uid", p.ResourceVersion, p.UID, srv.ResourceVersion())
	}
	if err := srv.Create(pod("ns", "a", nil)); !apierrors.IsAlreadyExists(err) {
		t.Errorf("create again: %v, want AlreadyExists", err)
	}
	if err := srv.Create(pod("", "nons", nil)); !apierrors.IsInvalid(err) {
		t.Errorf("create of a pod without namespace: %v, want Invalid", err)
	}
	p.Labels = map[string]string{"x": "1"}
	if err := srv.Update(p); err != nil {
		t.Fatal(err)
	}
	got, err := clientset(t, srv).CoreV1().Pods("ns").Get(c, "a", metav1.GetOptions{})
	if err != nil || got.Labels["x"] != "1" || got.ResourceVersion != p.ResourceVersion {
		t.Errorf("get after Update: %v %v, want label x=1 at %s", got.ObjectMeta, err, p.ResourceVersion)
	}
	// An unstructured object of a built-in kind is stored as its type.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "ns", "name": "cm"}, "data": map[string]any{"k": "v"},
	}}
	if err := srv.Create(u); err != nil {
		t.Fatal(err)
	}
	cm, err := clientset(t, srv).CoreV1().ConfigMaps("ns").Get(c, "cm", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" || u.GetResourceVersion() != cm.ResourceVersion {
		t.Errorf("configmap %v, %v; the unstructured object at %s", cm, err, u.GetResourceVersion())
	}
	if err := srv.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}); !apierrors.IsNotFound(err) {
		t.Errorf("delete again: %v, want NotFound", err)
	}
	if err := srv.Create(&corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}); err == nil {
		t.Error("create of a Binding, which is not served: no error")
	}
}
