package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kinformer/kinformer/testenv/internal/goprogress"
)

// Binaries are the paths of the two control-plane executables.
type Binaries struct {
	Etcd      string
	APIServer string
}

// BuildOptions say where the control-plane sources are, where built binaries are kept and
// where progress goes. The zero value is ready to use.
type BuildOptions struct {
	// SourceDir is the directory of the controlplane module (the one holding cmd/etcd and
	// cmd/kube-apiserver). Empty means $KINFORMER_CONTROLPLANE_DIR, or else the
	// controlplane directory next to this package's source files.
	SourceDir string
	// CacheDir is where built binaries are kept, one subdirectory per build key. Empty means
	// $KINFORMER_CACHE_DIR, or else "kinformer" under os.UserCacheDir.
	CacheDir string
	// Progress receives human-readable lines about the build: what is built, how many
	// packages have been compiled, a heartbeat while the linker runs. On a terminal (an
	// *os.File that is a character device) the count is one line redrawn in place. Nil
	// discards it all.
	Progress io.Writer
}

// Build returns the control-plane binaries, compiling them with the go command first unless
// a build with the same key is already cached.
//
// The key is a hash of the controlplane module's go.mod, go.sum and Go files, the Go version,
// GOOS/GOARCH and the build flags, so editing any of them (or upgrading Go) rebuilds and an
// unchanged checkout never does. Builds are compiled with CGO_ENABLED=0 into a temporary
// directory and renamed into place, so a cache entry is either complete or absent; a lock
// file serialises concurrent builds (several test binaries of one `go test ./...` may call
// Build at once), and the ones that waited reuse the winner's binaries.
//
// The first build compiles about 2,100 packages (etcd and k8s.io/kubernetes): it takes
// minutes, and Go's own build cache makes later rebuilds much faster. Cancelling ctx stops the
// build. Build needs a go command on PATH (`go test` and `go run` put theirs first).
func Build(ctx context.Context, opts BuildOptions) (Binaries, error) {
	src, err := sourceDir(opts.SourceDir)
	if err != nil {
		return Binaries{}, err
	}
	root, err := cacheRoot(opts.CacheDir)
	if err != nil {
		return Binaries{}, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return Binaries{}, fmt.Errorf("testenv: the go command is needed to build the control plane: %w", err)
	}
	kubeVersion, err := requiredVersion(filepath.Join(src, "go.mod"), "k8s.io/kubernetes")
	if err != nil {
		return Binaries{}, err
	}
	goEnv, err := goOutput(ctx, goTool, src, "env", "GOVERSION", "GOOS", "GOARCH")
	if err != nil {
		return Binaries{}, err
	}
	flags := buildFlags(kubeVersion)
	key, err := buildKey(src, goEnv, flags)
	if err != nil {
		return Binaries{}, err
	}

	dir := filepath.Join(root, "controlplane", key)
	bins := Binaries{Etcd: filepath.Join(dir, "etcd"), APIServer: filepath.Join(dir, "kube-apiserver")}
	if present(bins) {
		return bins, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return Binaries{}, fmt.Errorf("testenv: binary cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(filepath.Dir(dir), "build.lock"), func() {
		fmt.Fprintln(progress, "controlplane: waiting for another build of the control plane to finish")
	})
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	if present(bins) { // Another process built it while this one waited for the lock.
		return bins, nil
	}

	tmp, err := os.MkdirTemp(filepath.Dir(dir), key+".tmp-")
	if err != nil {
		return Binaries{}, fmt.Errorf("testenv: binary cache: %w", err)
	}
	defer os.RemoveAll(tmp) // Only left over if the build or the rename failed.
	fmt.Fprintf(progress, "controlplane: building etcd and kube-apiserver %s, once\n", kubeVersion)
	fmt.Fprintln(progress, "controlplane: ~2,100 packages the first time: several minutes")
	m := goprogress.New(progress, goprogress.Options{Label: "controlplane"})
	if err := goBuild(ctx, goTool, src, tmp, flags, m); err != nil {
		return Binaries{}, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp made it private.
		return Binaries{}, fmt.Errorf("testenv: binary cache: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return Binaries{}, fmt.Errorf("testenv: binary cache: %w", err)
	}
	m.Done("built etcd and kube-apiserver")
	return bins, nil
}

// buildFlags are the go build flags shared by both binaries. The -X flags give the apiserver
// its real version (otherwise it reports v0.0.0-master), which clients see on /version.
func buildFlags(kubeVersion string) []string {
	major, minor := "1", ""
	if parts := strings.SplitN(strings.TrimPrefix(kubeVersion, "v"), ".", 3); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	const pkg = "k8s.io/component-base/version."
	ldflags := fmt.Sprintf("-s -w -X %sgitMajor=%s -X %sgitMinor=%s -X %sgitVersion=%s -X %sgitTreeState=clean",
		pkg, major, pkg, minor, pkg, kubeVersion, pkg)
	return []string{"-ldflags=" + ldflags}
}

// buildEnv is the environment of every go command Build runs: no cgo (no C toolchain needed,
// static binaries), no workspace, the module graph exactly as go.mod and go.sum pin it.
func buildEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
}

// buildKey hashes everything that decides the content of the binaries.
func buildKey(src, goEnv string, flags []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "env %q\nflags %q\nbuild-env %q\n", goEnv, flags, buildEnv()[len(os.Environ()):])
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || !(name == "go.mod" || name == "go.sum" || strings.HasSuffix(name, ".go")) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		fmt.Fprintf(h, "file %s %d\n", filepath.ToSlash(rel), len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("testenv: hash control-plane sources: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// requiredVersion finds the version of module in a go.mod's require directives. It reads the
// file as text, so it needs neither the network nor the module cache.
func requiredVersion(goMod, module string) (string, error) {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return "", fmt.Errorf("testenv: read control-plane go.mod: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) > 0 && fields[0] == "require" {
			fields = fields[1:]
		}
		if len(fields) >= 2 && fields[0] == module && strings.HasPrefix(fields[1], "v") {
			return fields[1], nil
		}
	}
	return "", fmt.Errorf("testenv: %s does not require %s", goMod, module)
}

func present(b Binaries) bool {
	for _, p := range []string{b.Etcd, b.APIServer} {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// sourceDir finds the controlplane module.
func sourceDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("KINFORMER_CONTROLPLANE_DIR")
	}
	if dir == "" {
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			return "", errors.New("testenv: cannot locate the controlplane module; set BuildOptions.SourceDir or KINFORMER_CONTROLPLANE_DIR")
		}
		dir = filepath.Join(filepath.Dir(file), "controlplane")
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("testenv: controlplane module not found (set BuildOptions.SourceDir or KINFORMER_CONTROLPLANE_DIR): %w", err)
	}
	return dir, nil
}

func cacheRoot(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("KINFORMER_CACHE_DIR")
	}
	if dir == "" {
		user, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("testenv: no cache directory (set BuildOptions.CacheDir or KINFORMER_CACHE_DIR): %w", err)
		}
		dir = filepath.Join(user, "kinformer")
	}
	return dir, nil
}

// goOutput runs a short go command in dir and returns its trimmed standard output.
func goOutput(ctx context.Context, goTool, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = dir
	cmd.Env = buildEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("testenv: go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
