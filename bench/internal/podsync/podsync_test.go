package podsync

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinformer/kinformer/shard"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func pod(i int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p-%d", i),
		UID: types.UID(fmt.Sprintf("uid-%d", i)), ResourceVersion: fmt.Sprint(100 + i)}}
}

func TestDigestIsTheSameInAnyOrderAndChangesWithAVersion(t *testing.T) {
	a, b := []*corev1.Pod{pod(1), pod(2), pod(3)}, []*corev1.Pod{pod(3), pod(1), pod(2)}
	if Digest(a) != Digest(b) {
		t.Fatalf("digests differ by order: %q, %q", Digest(a), Digest(b))
	}
	c := []*corev1.Pod{pod(1), pod(2), pod(3)}
	c[1].ResourceVersion = "999"
	if Digest(a) == Digest(c) {
		t.Fatalf("a changed version kept the digest %q", Digest(a))
	}
}

func TestCounterWaitsForWantPods(t *testing.T) {
	c := NewCounter(3)
	c.Add()
	c.Add()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after 2 of 3 with its context ended: %v, want context.Canceled", err)
	}
	c.Add()
	c.Add() // past want: no second close
	if err := c.Wait(t.Context()); err != nil {
		t.Fatalf("Wait after 3 of 3: %v", err)
	}
	if err := NewCounter(0).Wait(ctx); err != nil {
		t.Fatalf("Wait for 0 pods: %v", err)
	}
}

func TestCheckRefusesAMissingPodOrOneOutsideTheShard(t *testing.T) {
	set, err := shard.NewSet(shard.UID, shard.Split(2)[0])
	if err != nil {
		t.Fatal(err)
	}
	var in []*corev1.Pod
	var out *corev1.Pod
	for i := 0; len(in) < 3 || out == nil; i++ {
		switch p := pod(i); {
		case set.Contains(p):
			in = append(in, p)
		case out == nil:
			out = p
		}
	}
	in = in[:3]
	got, err := Check("x", in, set, 3)
	if err != nil || got != Digest(in) {
		t.Fatalf("Check of 3 pods in the shard: %q, %v; want %q", got, err, Digest(in))
	}
	if _, err := Check("x", in, set, 4); err == nil {
		t.Fatal("Check of 3 pods, want 4: no error")
	}
	if _, err := Check("x", append(in[:2:2], out), set, 3); err == nil {
		t.Fatal("Check with a pod outside the shard: no error")
	}
}
