package sharding_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/kube"
	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/shard"
	"github.com/kinformer/kinformer/testenv"
)

// label is the label selector of the objects makePinObjects made with
// prefix: tests list them across namespaces.
func label(prefix string) string { return "kinformer-test=" + prefix }

// makePinObjects creates nNS namespaces of perNS config maps each, all
// labelled label(prefix), and returns them as the server lists them.
func makePinObjects(t *testing.T, env *testenv.Env, prefix string, nNS, perNS int) []corev1.ConfigMap {
	t.Helper()
	for i := range nNS {
		ns := fmt.Sprintf("%s-%d", prefix, i)
		if err := env.CreateNamespace(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
		if err := env.CreateConfigMaps(t.Context(), ns, perNS, testenv.BulkOptions{Labels: map[string]string{"kinformer-test": prefix}}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := env.Clientset().CoreV1().ConfigMaps("").List(t.Context(), metav1.ListOptions{LabelSelector: label(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != nNS*perNS {
		t.Fatalf("listed %d objects, made %d", len(list.Items), nNS*perNS)
	}
	return list.Items
}

func key(o metav1.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// pinSets is the table of shards the test asks the server for: the
// splits in 2, 3 and 7, two ranges at once, and around the hash of
// several objects the four ranges whose boundary is that hash (the hash
// as a start is in, as an end is out).
func pinSets(t *testing.T, field shard.Field, objs []corev1.ConfigMap) []shard.Set {
	t.Helper()
	var sets []shard.Set
	add := func(rs ...shard.Range) {
		s, err := shard.NewSet(field, rs...)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, s)
	}
	for _, n := range []int{2, 3, 7} {
		for _, r := range shard.Split(n) {
			add(r)
		}
	}
	add(shard.Split(4)[0], shard.Split(4)[2])
	add(shard.Split(7)[1], shard.Split(7)[5], shard.Split(7)[6])
	for i := 0; i < len(objs); i += len(objs) / 5 {
		h := shard.HashOf(&objs[i], field)
		add(shard.Range{Start: h, End: h + 1}) // just this hash
		add(shard.Range{Start: 0, End: h})     // up to it, excluded
		add(shard.Range{Start: h, End: 0})     // from it, included
		if h != ^uint64(0) {
			add(shard.Range{Start: h + 1, End: 0}) // from just after it
		}
	}
	return sets
}

// The pinning test: for every shard of the table, by uid and by
// namespace, the apiserver's answer to a list with the shard selector is
// exactly the objects kinformer's Set places in the shard, and the server
// says it applied the selector.
func TestMembershipAgreesWithTheAPIServer(t *testing.T) {
	env := envWithGate(t, true)
	objs := makePinObjects(t, env, "pin", 12, 6)
	client := env.Clientset()
	for _, field := range []shard.Field{shard.UID, shard.Namespace} {
		for _, set := range pinSets(t, field, objs) {
			var want []string
			for i := range objs {
				if set.Contains(&objs[i]) {
					want = append(want, key(&objs[i]))
				}
			}
			got, info := serverShard(t, client, label("pin"), set)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: server lists %d objects, kinformer places %d: %s", set, len(got), len(want), diffKeys(got, want))
			}
			if info != set.Selector() {
				t.Errorf("%s: shardInfo %q, want %q", set, info, set.Selector())
			}
		}
	}
}

// serverShard lists the objects labels selects with set's selector and returns
// their keys, sorted, and the selector the server says it applied.
func serverShard(t *testing.T, client kubernetes.Interface, labels string, set shard.Set) ([]string, string) {
	t.Helper()
	list, err := client.CoreV1().ConfigMaps("").List(t.Context(), metav1.ListOptions{LabelSelector: labels, ShardSelector: set.Selector()})
	if err != nil {
		t.Fatalf("%s: %v", set, err)
	}
	var keys []string
	for i := range list.Items {
		keys = append(keys, key(&list.Items[i]))
	}
	slices.Sort(keys)
	info := ""
	if list.ShardInfo != nil {
		info = list.ShardInfo.Selector
	}
	return keys, info
}

func diffKeys(got, want []string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, k := range got {
		g[k] = true
	}
	for _, k := range want {
		w[k] = true
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(g)) {
		if !w[k] {
			fmt.Fprintf(&b, " +%s", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if !g[k] {
			fmt.Fprintf(&b, " -%s", k)
		}
	}
	return b.String()
}

// A kinformer source given a shard lists the same objects as the server
// does for it, gate on or off: the server filters, or the source does.
func TestShardedSourceListsTheServersShardGateOnOrOff(t *testing.T) {
	on := envWithGate(t, true)
	objs := makePinObjects(t, on, "src", 4, 10)
	sets := pinSets(t, shard.UID, objs)[:5]
	for _, gateOn := range []bool{true, false} {
		env := on
		if !gateOn {
			env = envWithGate(t, false)
			objs = makePinObjects(t, env, "src", 4, 10)
		}
		for _, set := range sets {
			src, err := kube.Source[*corev1.ConfigMap](t.Context(), env.RESTConfig(), kube.SourceOptions{Selection: kube.Selection{LabelSelector: label("src"), Shard: set}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := listwatch.ListAll(t.Context(), src, listwatch.Options{}, 7)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, o := range res.Items {
				got = append(got, key(o))
			}
			for i := range objs {
				if set.Contains(&objs[i]) {
					want = append(want, key(&objs[i]))
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("gate %v, %s: source lists %s", gateOn, set, diffKeys(got, want))
			}
		}
	}
}
