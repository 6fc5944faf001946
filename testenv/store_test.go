package testenv

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func TestStoreObjectsAreServedByTheAPI(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	ctx := testContext(t)
	const ns, n = "stored", 250 // three transactions
	if err := shared.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	cms := shared.Clientset().CoreV1().ConfigMaps(ns)
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	err = shared.StoreObjects(ctx, "configmaps", n, func(i int) StoredObject {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i), Namespace: ns, UID: types.UID("uid-" + strconv.Itoa(i)),
				ResourceVersion: "999"}, // not stored
			Data: map[string]string{"index": strconv.Itoa(i)},
		}
	}, BulkOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != n {
		t.Fatalf("listed %d config maps, want %d", len(list.Items), n)
	}
	for _, cm := range list.Items {
		if cm.Data["index"] != cm.Name[len("cm-"):] || cm.ResourceVersion == "" || cm.ResourceVersion == "999" {
			t.Fatalf("config map %s: data %v, version %q", cm.Name, cm.Data, cm.ResourceVersion)
		}
	}
	for range n {
		ev := nextEvent(ctx, t, w)
		if ev.Type != watch.Added {
			t.Fatalf("watch event %s, want ADDED", ev.Type)
		}
	}
}

// A list right after StoreObjects sees every object. The watch cache applies each of
// StoreObjects' transactions one object at a time; before its final mark a list missed up
// to a transaction's objects in about one try in ten, so twenty tries.
func TestStoredObjectsAreAllListedRightAfter(t *testing.T) {
	dumpLogsOnFailure(t, shared)
	ctx := testContext(t)
	const tries, n = 20, 250
	for try := range tries {
		ns := "stored-list-" + strconv.Itoa(try)
		if err := shared.CreateNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		err := shared.StoreObjects(ctx, "configmaps", n, func(i int) StoredObject {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-" + strconv.Itoa(i), Namespace: ns,
				UID: types.UID(ns + "-" + strconv.Itoa(i))}}
		}, BulkOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		list, err := shared.Clientset().CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != n {
			t.Errorf("try %d: listed %d config maps right after storing %d", try, len(list.Items), n)
		}
	}
}
