package fake_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/listwatch"
	"github.com/kinformer/kinformer/listwatch/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func cm(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func newSource(t *testing.T, opts fake.Options[*corev1.ConfigMap]) *fake.Source[*corev1.ConfigMap] {
	t.Helper()
	s, err := fake.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustCreate(t *testing.T, s *fake.Source[*corev1.ConfigMap], names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := s.Create(cm(n)); err != nil {
			t.Fatal(err)
		}
	}
}

func next(t *testing.T, w listwatch.Watch[*corev1.ConfigMap]) listwatch.Event[*corev1.ConfigMap] {
	t.Helper()
	ev, err := w.Next()
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return ev
}

func TestFakeMutationsBumpResourceVersion(t *testing.T) {
	s := newSource(t, fake.Options[*corev1.ConfigMap]{})
	mustCreate(t, s, "a")
	if _, err := s.Create(cm("a")); !errors.Is(err, fake.ErrExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := s.Update(cm("b")); !errors.Is(err, fake.ErrNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	got, err := s.Update(cm("a"))
	if err != nil || got.ResourceVersion != "3" || s.ResourceVersion() != "3" {
		t.Fatalf("update: %v rv %q / %q", err, got.ResourceVersion, s.ResourceVersion())
	}
	if _, err := s.Delete("ns", "a"); err != nil || len(s.Objects()) != 0 {
		t.Fatalf("delete: %v, %d left", err, len(s.Objects()))
	}
}

func TestFakePaginatesAndExpiresTokensOnCompaction(t *testing.T) {
	ctx := t.Context()
	s := newSource(t, fake.Options[*corev1.ConfigMap]{})
	mustCreate(t, s, "a", "b", "c")
	p1, err := s.List(ctx, listwatch.Options{Limit: 2})
	if err != nil || len(p1.Items) != 2 || p1.Continue == "" || *p1.RemainingItemCount != 1 {
		t.Fatalf("page 1: %v %+v", err, p1)
	}
	mustCreate(t, s, "d") // the token pins the snapshot: d is not in it
	p2, err := s.List(ctx, listwatch.Options{Limit: 2, Continue: p1.Continue})
	if err != nil || len(p2.Items) != 1 || p2.Items[0].Name != "c" || p2.Continue != "" {
		t.Fatalf("page 2: %v %+v", err, p2)
	}
	s.Compact()
	if _, err := s.List(ctx, listwatch.Options{Limit: 2, Continue: p1.Continue}); !errors.Is(err, listwatch.ErrExpired) {
		t.Fatalf("after compaction: %v", err)
	}
}

func TestFakeListVersionRules(t *testing.T) {
	ctx := t.Context()
	s := newSource(t, fake.Options[*corev1.ConfigMap]{CompactionWindow: 2, ServeZeroFromCache: true})
	mustCreate(t, s, "a", "b", "c", "d") // rv 5, compacted at 3
	if _, err := s.List(ctx, listwatch.Options{ResourceVersion: "9"}); !errors.Is(err, listwatch.ErrTooLargeResourceVersion) {
		t.Fatalf("too large: %v", err)
	}
	if _, err := s.List(ctx, listwatch.Options{ResourceVersion: "2", ResourceVersionMatch: listwatch.MatchExact}); !errors.Is(err, listwatch.ErrExpired) {
		t.Fatalf("exact compacted: %v", err)
	}
	p, err := s.List(ctx, listwatch.Options{ResourceVersion: "3", ResourceVersionMatch: listwatch.MatchExact})
	if err != nil || len(p.Items) != 2 || p.ResourceVersion != "3" {
		t.Fatalf("exact at 3: %v %+v", err, p)
	}
	p, err = s.List(ctx, listwatch.Options{ResourceVersion: "2"})
	if err != nil || len(p.Items) != 4 || p.ResourceVersion != "5" {
		t.Fatalf("not older than 2: %v %+v", err, p)
	}
	p, err = s.List(ctx, listwatch.Options{ResourceVersion: "0", Limit: 1})
	if err != nil || len(p.Items) != 4 || p.Continue != "" {
		t.Fatalf("rv 0 from cache: %v %+v", err, p)
	}
}

func TestFakeWatchReplaysFromVersionAndExpiresCompacted(t *testing.T) {
	ctx := t.Context()
	s := newSource(t, fake.Options[*corev1.ConfigMap]{})
	mustCreate(t, s, "a", "b")
	w, err := s.Watch(ctx, listwatch.Options{ResourceVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if ev := next(t, w); ev.Type != listwatch.Added || ev.Object.Name != "b" || ev.ResourceVersion != "3" {
		t.Fatalf("replay: %+v", ev)
	}
	if _, err := s.Delete("ns", "a"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != listwatch.Deleted || ev.ResourceVersion != "4" || ev.Object.ResourceVersion != "4" {
		t.Fatalf("live delete: %+v", ev)
	}
	s.Compact()
	old, err := s.Watch(ctx, listwatch.Options{ResourceVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, old); ev.Type != listwatch.Error || !errors.Is(ev.Err, listwatch.ErrExpired) {
		t.Fatalf("compacted watch: %+v", ev)
	}
	if _, err := old.Next(); err != io.EOF {
		t.Fatalf("after error event: %v", err)
	}
}

func TestFakeStreamingListEndsWithInitialEventsEndBookmark(t *testing.T) {
	s := newSource(t, fake.Options[*corev1.ConfigMap]{})
	mustCreate(t, s, "a", "b")
	w, err := s.Watch(t.Context(), listwatch.Options{SendInitialEvents: true, AllowBookmarks: true, ResourceVersionMatch: listwatch.MatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	next(t, w)
	next(t, w)
	if ev := next(t, w); ev.Type != listwatch.Bookmark || !ev.InitialEventsEnd || ev.ResourceVersion != "3" || ev.Object.ResourceVersion != "3" {
		t.Fatalf("end bookmark: %+v", ev)
	}
	u := newSource(t, fake.Options[*corev1.ConfigMap]{StreamingListUnsupported: true})
	if _, err := u.Watch(t.Context(), listwatch.Options{SendInitialEvents: true, AllowBookmarks: true}); !errors.Is(err, listwatch.ErrStreamingListUnsupported) {
		t.Fatalf("unsupported: %v", err)
	}
}

func TestFakeFaults(t *testing.T) {
	ctx := t.Context()
	s := newSource(t, fake.Options[*corev1.ConfigMap]{})
	open := func() listwatch.Watch[*corev1.ConfigMap] {
		t.Helper()
		w, err := s.Watch(ctx, listwatch.Options{ResourceVersion: s.ResourceVersion(), AllowBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		return w
	}
	// refused
	s.RefuseNext(1)
	if _, err := s.List(ctx, listwatch.Options{}); !errors.Is(err, listwatch.ErrUnavailable) {
		t.Fatalf("refused: %v", err)
	}
	// reset
	w := open()
	s.ResetWatches()
	if _, err := w.Next(); !errors.Is(err, listwatch.ErrUnavailable) {
		t.Fatalf("reset: %v", err)
	}
	// early close
	s.CloseNextWatches(1)
	if _, err := open().Next(); err != io.EOF {
		t.Fatalf("early close: %v", err)
	}
	// drop: gap, one more change, then 410
	w = open()
	s.DropNextEvent()
	mustCreate(t, s, "dropped", "after", "never")
	if ev := next(t, w); ev.Object.Name != "after" {
		t.Fatalf("after drop: %+v", ev)
	}
	if ev := next(t, w); ev.Type != listwatch.Error || !errors.Is(ev.Err, listwatch.ErrExpired) {
		t.Fatalf("410 after drop: %+v", ev)
	}
	// wrong type, bookmark, error event
	w = open()
	s.InjectWrongType("*v1.Secret")
	s.Bookmark()
	s.SendError(errors.New("boom"))
	if _, err := w.Next(); !errors.Is(err, listwatch.ErrWrongType) {
		t.Fatalf("wrong type: %v", err)
	}
	if ev := next(t, w); ev.Type != listwatch.Bookmark {
		t.Fatalf("bookmark: %+v", ev)
	}
	if ev := next(t, w); ev.Type != listwatch.Error {
		t.Fatalf("error event: %+v", ev)
	}
	st := s.Stats()
	if st.Refused != 1 || st.Resets != 1 || st.EarlyCloses != 1 || st.Drops != 1 || st.WrongTypes != 1 || st.ErrorEvents != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if s.OpenWatches() != 0 {
		t.Fatalf("open watches: %d", s.OpenWatches())
	}
}

func TestFakeWatchEndsOnTimeoutAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSource(t, fake.Options[*corev1.ConfigMap]{})
		w, err := s.Watch(t.Context(), listwatch.Options{ResourceVersion: "1", TimeoutSeconds: 30})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Next(); err != io.EOF { // blocks until the fake 30 s pass
			t.Fatalf("timeout: %v", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		w, err = s.Watch(ctx, listwatch.Options{ResourceVersion: "1"})
		if err != nil {
			t.Fatal(err)
		}
		go cancel()
		if _, err := w.Next(); err != io.EOF {
			t.Fatalf("cancel: %v", err)
		}
	})
}
