package controllerruntime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kinformer/kinformer/testenv"
)

// TestEnvtestRunsOnTestenvAssets starts controller-runtime's envtest on the
// directory testenv.WriteAssets writes (what KUBEBUILDER_ASSETS would name):
// envtest's own etcd and kube-apiserver, downloaded from nowhere.
func TestEnvtestRunsOnTestenvAssets(t *testing.T) {
	dir, err := testenv.WriteAssets(t.Context(), testenv.AssetsOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e := &envtest.Environment{BinaryAssetsDirectory: dir}
	cfg, err := e.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	}()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps("default").Create(t.Context(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "envtest"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the envtest apiserver does not serve: %v", err)
	}
}
