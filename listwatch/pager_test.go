package listwatch_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func seeded(t testing.TB, n int, opts fake.Options[*corev1.ConfigMap]) *fake.Source[*corev1.ConfigMap] {
	t.Helper()
	src, err := fake.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("o%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

func TestListAllWalksEveryPage(t *testing.T) {
	src := seeded(t, 7, fake.Options[*corev1.ConfigMap]{})
	res, err := listwatch.ListAll(t.Context(), src, listwatch.Options{ResourceVersion: "0", LabelSelector: "a=b"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 7 || !res.Paginated || res.FullListFallback || res.ResourceVersion != "8" {
		t.Fatalf("result: %d items, %+v", len(res.Items), res)
	}
	calls := src.ListCalls()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	for i, c := range calls {
		if c.Limit != 3 || c.LabelSelector != "a=b" {
			t.Fatalf("call %d: %+v", i, c)
		}
		if i > 0 && (c.ResourceVersion != "" || c.Continue == "") {
			t.Fatalf("call %d must carry a token and no version: %+v", i, c)
		}
	}
}

func TestListAllFallsBackToFullListOnExpiredToken(t *testing.T) {
	var src *fake.Source[*corev1.ConfigMap]
	src = seeded(t, 5, fake.Options[*corev1.ConfigMap]{OnList: func(o listwatch.Options) error {
		if o.Continue != "" {
			return fmt.Errorf("token too old: %w", listwatch.ErrExpired)
		}
		return nil
	}})
	res, err := listwatch.ListAll(t.Context(), src, listwatch.Options{ResourceVersion: "0"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 5 || !res.FullListFallback {
		t.Fatalf("result: %d items, %+v", len(res.Items), res)
	}
	last := src.ListCalls()[2]
	if last.Limit != 0 || last.Continue != "" || last.ResourceVersion != "0" {
		t.Fatalf("fallback call: %+v", last)
	}
}

func TestListAllReturnsFirstPageError(t *testing.T) {
	src := seeded(t, 1, fake.Options[*corev1.ConfigMap]{})
	src.RefuseNext(1)
	if _, err := listwatch.ListAll(t.Context(), src, listwatch.Options{}, 2); !errors.Is(err, listwatch.ErrUnavailable) {
		t.Fatalf("err %v", err)
	}
	src2 := seeded(t, 1, fake.Options[*corev1.ConfigMap]{OnList: func(listwatch.Options) error { return listwatch.ErrExpired }})
	res, err := listwatch.ListAll(t.Context(), src2, listwatch.Options{ResourceVersion: "1", ResourceVersionMatch: listwatch.MatchExact}, 2)
	if !errors.Is(err, listwatch.ErrExpired) || len(src2.ListCalls()) != 1 || res.Items != nil {
		t.Fatalf("an expired first page must not fall back: %v, %d calls", err, len(src2.ListCalls()))
	}
}

func TestListAllStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	src := seeded(t, 5, fake.Options[*corev1.ConfigMap]{OnList: func(o listwatch.Options) error {
		cancel()
		return nil
	}})
	if _, err := listwatch.ListAll(ctx, src, listwatch.Options{}, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestPhaseErrorAndDecodeErrorMatch(t *testing.T) {
	de := &listwatch.DecodeError{Type: listwatch.Added, Got: "*v1.Secret"}
	err := fmt.Errorf("r: %w", &listwatch.PhaseError{Phase: listwatch.PhaseWatchStream, Err: de})
	var pe *listwatch.PhaseError
	if !errors.As(err, &pe) || pe.Phase != listwatch.PhaseWatchStream || !errors.Is(err, listwatch.ErrWrongType) {
		t.Fatalf("%v", err)
	}
	if got := err.Error(); got != "r: watch stream: ADDED event carried *v1.Secret: object of the wrong type" {
		t.Fatalf("message %q", got)
	}
}

func ExampleListAll() {
	src, _ := fake.New(fake.Options[*corev1.ConfigMap]{})
	for _, name := range []string{"a", "b", "c"} {
		src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
	}
	res, err := listwatch.ListAll(context.Background(), src, listwatch.Options{ResourceVersion: "0"}, 2)
	if err != nil {
		panic(err)
	}
	for _, cm := range res.Items {
		fmt.Println(cm.Name, cm.ResourceVersion)
	}
	fmt.Println("listed at", res.ResourceVersion, "paginated:", res.Paginated)
	// Output:
	// a 2
	// b 3
	// c 4
	// listed at 4 paginated: true
}
