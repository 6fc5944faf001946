package shard_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
	"github.com/kinformer/kinformer/shard"
)

func names(objs []*corev1.ConfigMap) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Name)
	}
	slices.Sort(out)
	return out
}

// Filter keeps exactly the set's objects, in lists and in watches, and
// lets bookmarks through.
func TestFilterKeepsTheSetsObjectsInListsAndWatches(t *testing.T) {
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	set := mustSet(t, shard.UID, shard.Split(2)[1])
	var in []*corev1.ConfigMap
	for i := range 40 {
		cm := configMap("ns", uuid.NewUUID())
		cm.Name = fmt.Sprintf("cm-%02d", i)
		if _, err := src.Create(cm); err != nil {
			t.Fatal(err)
		}
		if set.Contains(cm) {
			in = append(in, cm)
		}
	}
	if len(in) == 0 || len(in) == 40 {
		t.Fatalf("%d of 40 objects in half the space: pick other uids", len(in))
	}
	lw := shard.Filter[*corev1.ConfigMap](src, set)
	page, err := lw.List(t.Context(), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(page.Items), names(in); !slices.Equal(got, want) {
		t.Fatalf("list: %v, want %v", got, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w, err := lw.Watch(ctx, listwatch.Options{ResourceVersion: page.ResourceVersion, AllowBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var inside, outside *corev1.ConfigMap
	for inside == nil || outside == nil {
		cm := configMap("ns", uuid.NewUUID())
		cm.Name = "new-" + string(cm.UID)
		if set.Contains(cm) && inside == nil {
			inside = cm
		} else if !set.Contains(cm) && outside == nil {
			outside = cm
		}
	}
	for _, cm := range []*corev1.ConfigMap{outside, inside} {
		if _, err := src.Create(cm); err != nil {
			t.Fatal(err)
		}
	}
	src.Bookmark()
	var got []string
	for len(got) < 2 {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(ev.Type)+" "+ev.Object.Name)
	}
	if want := []string{"ADDED " + inside.Name, "BOOKMARK "}; !slices.Equal(got, want) {
		t.Errorf("watch: %q, want %q", got, want)
	}
}

func TestFilterOfTheZeroSetIsTheSourceItself(t *testing.T) {
	src, err := fake.New(fake.Options[*corev1.ConfigMap]{})
	if err != nil {
		t.Fatal(err)
	}
	if lw := shard.Filter[*corev1.ConfigMap](src, shard.Set{}); lw != listwatch.ListerWatcher[*corev1.ConfigMap](src) {
		t.Errorf("Filter with the zero Set wrapped the source")
	}
}
