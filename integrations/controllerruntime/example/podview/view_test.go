package podview

import (
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/integrations/controllerruntime"
	"github.com/kinformer/kinformer/integrations/controllerruntime/example/podsummary"
)

// TestViewReconcilerSameAsPods: the reconciler reading pod views, on
// kinformer's cache of views, sees what the reconciler reading pods sees on
// controller-runtime's cache.
func TestViewReconcilerSameAsPods(t *testing.T) {
	const pods = 200
	if err := podsummary.Populate(t.Context(), env.Clientset(), "view", pods); err != nil {
		t.Fatal(err)
	}
	cfg := env.RESTConfig()
	// Other tests' pods may be there too: every app is reconciled.
	all, err := env.Clientset().CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appSet := map[string]bool{}
	for _, p := range all.Items {
		appSet[p.Namespace+"/"+p.Labels["app"]] = true
	}
	apps := len(appSet)
	reference, err := podsummary.Run(t.Context(), cfg, nil, apps)
	if err != nil {
		t.Fatal(err)
	}
	views, err := RunView(t.Context(), cfg, controllerruntime.New, apps)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(reference.Summaries, views.Summaries) {
		for k, v := range reference.Summaries {
			if views.Summaries[k] != v {
				t.Errorf("%s: pods %q, views %q", k, v, views.Summaries[k])
			}
		}
	}
}
