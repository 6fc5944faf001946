package testenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// AssetsOptions configure WriteAssets. The zero value writes the default directory.
type AssetsOptions struct {
	// Dir is the directory to write. Empty means "assets" in the build cache directory
	// (see BuildOptions.CacheDir), which is stable across runs.
	Dir string
	// Build says where the binaries come from.
	Build BuildOptions
}

// WriteAssets makes a directory that controller-runtime's envtest can use as its binary
// assets (KUBEBUILDER_ASSETS, or envtest.Environment.BinaryAssetsDirectory): it holds
// etcd and kube-apiserver, symbolic links to the binaries Build returns (building them
// first if they are not cached; copies where links cannot be made). envtest then starts
// this control plane without downloading anything. kubectl is not provided: envtest only
// needs it for ControlPlane.KubeCtl, and building it would compile much of kubectl's own
// tree. WriteAssets returns the directory's absolute path; writing it again replaces the
// links, so the directory follows the cache after a rebuild.
func WriteAssets(ctx context.Context, opts AssetsOptions) (string, error) {
	bins, err := Build(ctx, opts.Build)
	if err != nil {
		return "", err
	}
	dir := opts.Dir
	if dir == "" {
		root, err := cacheRoot(opts.Build.CacheDir)
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "assets")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testenv: assets: %w", err)
	}
	for name, target := range map[string]string{"etcd": bins.Etcd, "kube-apiserver": bins.APIServer} {
		if err := placeBinary(filepath.Join(dir, name), target); err != nil {
			return "", fmt.Errorf("testenv: assets: %w", err)
		}
	}
	return dir, nil
}

// placeBinary makes path run target: a symbolic link (through a temporary name renamed
// into place, so a concurrent reader never sees it missing), else a copy.
func placeBinary(path, target string) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err == nil {
		return os.Rename(tmp, path)
	}
	data, err := os.ReadFile(target)
	if err != nil {
		return err
	}
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}
