package cache

import (
	"errors"
	"slices"
	"testing"
)

func TestUndeltaStorePushesWholeState(t *testing.T) {
	var pushes [][]string
	s := NewUndeltaStore(UndeltaStoreOptions[*obj]{Push: func(all []*obj) { pushes = append(pushes, names(all)) }})
	var nilObj *obj
	steps := []struct {
		name string
		err  error
		want []string // nil: no push expected
	}{
		{"add a", s.Add(newObj("ns", "a", "1")), []string{"ns/a@1"}},
		{"add b", s.Add(newObj("ns", "b", "1")), []string{"ns/a@1", "ns/b@1"}},
		{"update a", s.Update(newObj("ns", "a", "2")), []string{"ns/a@2", "ns/b@1"}},
		{"delete b", s.Delete(newObj("ns", "b", "")), []string{"ns/a@2"}},
		{"bad add", s.Add(nilObj), nil},
		{"replace", s.Replace([]*obj{newObj("ns", "c", "1")}), []string{"ns/c@1"}},
	}
	var want [][]string
	for _, st := range steps {
		if (st.want == nil) != (st.err != nil) && st.name != "resync" {
			t.Errorf("%s: err = %v", st.name, st.err)
		}
		if st.want != nil {
			want = append(want, st.want)
		}
	}
	if !slices.EqualFunc(pushes, want, slices.Equal) {
		t.Fatalf("pushes\n  %v\nwant\n  %v", pushes, want)
	}
	if got, ok, err := s.Get(newObj("ns", "c", "")); err != nil || !ok || got.rv != "1" {
		t.Fatalf("Get = %v %v %v", got, ok, err)
	}
	if _, ok, _ := s.GetByKey("ns/a"); ok || !slices.Equal(s.ListKeys(), []string{"ns/c"}) || len(s.List()) != 1 {
		t.Fatal("reads disagree with the last push")
	}
	if !errors.Is(steps[4].err, ErrInvalidObject) {
		t.Fatalf("bad add err = %v", steps[4].err)
	}
}

func TestNewUndeltaStorePanicsWithoutPush(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic without Push")
		}
	}()
	NewUndeltaStore(UndeltaStoreOptions[*obj]{})
}
