package e2e_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/informer"
	"github.com/kinformer/kinformer/kube"
)

// Read your own writes: after a create or an update, a wait for the
// version the server returned ends with that very write readable from the
// lister — every time, with no polling; a wait for a version the server has
// not reached ends with the caller's context; a version that cannot be
// compared is refused.
func TestWaitForResourceVersionReadsOwnWrites(t *testing.T) {
	ns := namespace(t, "ryow")
	errs := &errorLog{}
	f := newFactory(t, errs)
	inf, _, err := kube.Informer(t.Context(), f, kube.InformerOptions[*corev1.ConfigMap]{Selection: kube.Selection{Namespace: ns}})
	if err != nil {
		t.Fatal(err)
	}
	lister := informer.NewLister(inf.Cache()).Namespace(ns)
	startAndSync(t, f, errs)
	cms := env.Clientset().CoreV1().ConfigMaps(ns)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()

	for i := range 20 {
		name := "cm-" + strconv.Itoa(i%5)
		var written *corev1.ConfigMap
		if i < 5 {
			written, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": "0"}}, metav1.CreateOptions{})
		} else {
			cur, gerr := cms.Get(ctx, name, metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			cur.Data["i"] = strconv.Itoa(i)
			written, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		// Alternate the two waits: one key, the whole cache.
		if i%2 == 0 {
			err = inf.WaitForKey(ctx, ns+"/"+name, written.ResourceVersion)
		} else {
			err = inf.WaitForResourceVersion(ctx, written.ResourceVersion)
		}
		if err != nil {
			t.Fatalf("write %d: wait for %s: %v", i, written.ResourceVersion, err)
		}
		got, err := lister.Get(name)
		if err != nil {
			t.Fatalf("write %d: lister after the wait: %v", i, err)
		}
		if got.ResourceVersion != written.ResourceVersion || got.Data["i"] != written.Data["i"] {
			t.Fatalf("write %d: lister has %s at %s (i=%s), want the write at %s (i=%s)",
				i, name, got.ResourceVersion, got.Data["i"], written.ResourceVersion, written.Data["i"])
		}
	}
	all, err := lister.List(labels.Everything())
	if err != nil || len(all) != 5 {
		t.Fatalf("lister has %d config maps (%v), want 5", len(all), err)
	}

	// A version far ahead of the server: the wait ends with its context.
	last, err := strconv.ParseUint(inf.LastSyncResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	ahead := strconv.FormatUint(last+1_000_000_000, 10)
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	if err := inf.WaitForResourceVersion(short, ahead); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait for %s: %v, want the context's deadline", ahead, err)
	}
	if err := inf.WaitForKey(ctx, ns+"/cm-0", "not-a-version"); !errors.Is(err, informer.ErrIncomparableVersion) {
		t.Errorf("wait for an opaque version: %v, want ErrIncomparableVersion", err)
	}
	if len(errs.all()) != 0 {
		t.Errorf("errors: %v", errs.all())
	}
}
