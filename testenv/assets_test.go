package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAssetsLinksTheBuiltBinaries(t *testing.T) {
	bins, err := Build(t.Context(), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "assets")
	for range 2 { // writing again replaces the entries
		got, err := WriteAssets(t.Context(), AssetsOptions{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if got != dir {
			t.Errorf("WriteAssets returned %q, want %q", got, dir)
		}
	}
	for name, want := range map[string]string{"etcd": bins.Etcd, "kube-apiserver": bins.APIServer} {
		path := filepath.Join(dir, name)
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable: %v", name, info.Mode())
		}
		wantInfo, err := os.Stat(want)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(info, wantInfo) {
			t.Errorf("%s is not the built binary %s", path, want)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("assets directory holds %d entries, want etcd and kube-apiserver", len(entries))
	}
}
