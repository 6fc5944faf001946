package e2e_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/reflector"
	"github.com/kinformer/kinformer/testenv"
)

// A relist that deletes, changes and keeps objects, applied as it arrives
// (streaming, and paged in pages of 4), delivers what a whole-list replace
// delivers: one update per changed object from its last known version, one
// delete with final state unknown per deleted object carrying its last
// known state, one add (not initial) per new object, and nothing for the
// objects that did not change. (Config maps: no watch cache, so the
// compaction expires the held-back watch.)
func TestRelistDeliversTheNotificationsOfAWholeReplace(t *testing.T) {
	for _, mode := range []struct {
		name     string
		settings reflector.Settings
	}{
		{"streaming", reflector.Settings{Streaming: reflector.StreamingOn}},
		{"paged", reflector.Settings{Streaming: reflector.StreamingOff, PageSize: 4}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			ns := namespace(t, "relist-"+mode.name)
			if err := env.CreateConfigMaps(t.Context(), ns, 20, testenv.BulkOptions{}); err != nil {
				t.Fatal(err)
			}
			src, err := kube.Source[*corev1.ConfigMap](t.Context(), env.RESTConfig(), kube.SourceOptions{Selection: kube.Selection{Namespace: ns}})
			if err != nil {
				t.Fatal(err)
			}
			p := newProbe(src)
			r := runInformer(t, p, informer.Options[*corev1.ConfigMap]{Settings: mode.settings}, false)
			requireCacheMatches(t, r.inf.Cache(), listConfigMaps(ns))
			known := map[string]string{}
			for _, cm := range r.inf.Cache().List() {
				known[cm.Name] = cm.ResourceVersion
			}
			relistsBefore := relists(p)
			p.pause()
			seen := len(r.rec.all())

			cms := env.Clientset().CoreV1().ConfigMaps(ns)
			deleted := []string{"cm-0", "cm-7", "cm-13"}
			for _, name := range deleted {
				if err := cms.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			changed := map[string]string{} // name -> new version
			for _, name := range []string{"cm-1", "cm-8", "cm-19"} {
				cm, err := cms.Get(t.Context(), name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				cm.Data["changed"] = "true"
				up, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				changed[name] = up.ResourceVersion
			}
			if err := env.CreateConfigMaps(t.Context(), ns, 2, testenv.BulkOptions{NamePrefix: "new-"}); err != nil {
				t.Fatal(err)
			}
			if _, err := env.CompactEtcd(t.Context()); err != nil {
				t.Fatal(err)
			}
			p.resume()

			requireCacheMatches(t, r.inf.Cache(), listConfigMaps(ns))
			if !p.sawExpired() || relists(p) <= relistsBefore {
				t.Fatalf("the compaction forced no relist (410 seen %v, relists %d -> %d)", p.sawExpired(), relistsBefore, relists(p))
			}
			want := len(deleted) + len(changed) + 2
			eventually(t, "every notification of the relist", func() (bool, string) {
				n := len(r.rec.all()) - seen
				return n >= want, fmt.Sprintf("%d of %d", n, want)
			})
			got := r.rec.all()[seen:]
			if len(got) != want {
				t.Errorf("%d notifications, want %d: %+v", len(got), want, got)
			}
			for _, n := range got {
				switch {
				case slices.Contains(deleted, n.name):
					if n.kind != "delete" || !n.unknown || n.rv != known[n.name] {
						t.Errorf("%s: %+v, want a delete with final state unknown at its last known version %s", n.name, n, known[n.name])
					}
				case changed[n.name] != "":
					if n.kind != "update" || n.oldRV != known[n.name] || n.rv != changed[n.name] {
						t.Errorf("%s: %+v, want an update from %s to %s", n.name, n, known[n.name], changed[n.name])
					}
				case n.name == "new-0" || n.name == "new-1":
					if n.kind != "add" || n.initial {
						t.Errorf("%s: %+v, want an add outside the initial list", n.name, n)
					}
				default:
					t.Errorf("%s did not change, yet was notified: %+v", n.name, n)
				}
			}
			for i := range 2 {
				if name := "new-" + strconv.Itoa(i); len(r.rec.of(name)) != 1 {
					t.Errorf("%s: %+v, want one add", name, r.rec.of(name))
				}
			}
		})
	}
}
