# kinformer — see README.md. Every target works on a machine that has only Go.
GO        ?= go
# Every Go module in the repo; a module is a directory with a go.mod, at the top or one level
# down, or an adapter under integrations/ (testenv/controlplane, the kube-apiserver's sources,
# is built by `make controlplane`, not tested).
MODULES   := $(patsubst %/go.mod,%,$(wildcard go.mod */go.mod integrations/*/go.mod))
MODULES   := $(patsubst go.mod,.,$(MODULES))
TESTFLAGS ?= -race -count=1 -timeout 30m

.PHONY: all test fmt-check vet unit controlplane demo bench bench-controlplane bench-controllerruntime bench-memory bench-scale bench-outage bench-cli kubectl test-clientgo-upstream bench-million help

all: test

help:
	@echo "make test   - gofmt check, go vet and go test -race over every module ($(MODULES))"
	@echo "make demo   - local control plane + workload + live kinformer caches"
	@echo "make bench  - kinformer vs client-go, side by side (in-memory scenarios)"
	@echo "make bench-controlplane - scenario 7: 20,000 pods synced from the local control plane"
	@echo "make bench-controllerruntime - one controller-runtime controller, its default cache vs kinformer's, 20,000 pods"
	@echo "make bench-memory - issue 13 at 20,000 pods: the sync floor, heap per pod, projected sync CPU, relist peak"
	@echo "make bench-scale  - issue 13's memory figures at 10,000, 50,000 and 100,000 pods (under 25 minutes)"
	@echo "make bench-cli    - issue 26: kinformer get pods -A against kubectl (names, table, JSON) at 100,000 pods: time, peak RSS, same output"
	@echo "make kubectl      - kubectl built from k8s.io/kubectl at the control plane's release, into bin/kubectl (bench-cli's reference)"
	@echo "make test-clientgo-upstream - client-go's shared_informer_test.go on client-go's informer and on the adapter, the documented differences included (about 3 minutes)"
	@echo "make bench-million - issue 25: 10,000, 100,000 and 1,000,000 ReplicaSets seeded into etcd, every informer variant per size (about 42 min); refuses when memory or disk is short"
	@echo "make bench-outage - issue 22: 10 informers per side lose the apiserver for 60 s; time until the last watches again (about 5 minutes)"

test: fmt-check vet unit

fmt-check:
	@echo "==> gofmt"
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(MODULES); do echo "==> go vet ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

# gorun (testenv/cmd/gorun) is `go run` with progress: it compiles a command counting the
# packages on one line, where `go run` says nothing for minutes on a fresh machine, then runs
# it. It compiles itself first from the standard library alone (seconds; about 20 s on a
# machine that has never built Go), counted by the loop below; errors are shown as they come.
GORUN := bin/gorun
# When this make started, for the commands to report the whole wait (see goprogress.Started).
export KINFORMER_STARTED := $(shell date +%s 2>/dev/null)
define build_gorun
	@cd testenv && { $(GO) build -v -o ../$(GORUN) ./cmd/gorun 2>&1; echo "exit $$?"; } | { n=0; tty=; [ -t 1 ] && tty=1; \
	while IFS= read -r l; do case "$$l" in \
	"exit 0") if [ -n "$$tty" ] && [ $$n -gt 0 ]; then printf '\r\033[K'; fi; exit 0;; \
	"exit "*) exit 1;; \
	*[\ :]*|"") if [ -n "$$tty" ]; then printf '\r\033[K'; fi; printf '%s\n' "$$l";; \
	*) n=$$((n+1)); if [ -n "$$tty" ]; then printf '\r    compiling the build tools, package %d\033[K' $$n; fi;; \
	esac; done; exit 1; }
endef

# The local control plane (etcd + kube-apiserver compiled from their Go modules) that the
# end-to-end tests and the demo run. The first run compiles the command that builds them
# (a few minutes), then about 2,100 packages (several more); both are counted on one line
# and cached, so later runs find the binaries at once.
controlplane:
	@echo "==> control plane (etcd + kube-apiserver, built once and cached)"
	$(build_gorun)
	@cd testenv && ../$(GORUN) ./cmd/controlplane build

unit: controlplane
	@for m in $(MODULES); do echo "==> go test $(TESTFLAGS) ($$m)"; (cd $$m && $(GO) test $(TESTFLAGS) ./...) || exit 1; done

# client-go v0.37.2's shared_informer_test.go against client-go's informer and the client-go
# adapter; make test runs it too, but for the documented differences, which take 90 s to fail.
test-clientgo-upstream:
	@cd integrations/clientgo && $(GO) test -count=1 -v -run TestUpstreamSuite ./upstream/cache/ -args -upstream.full

demo: controlplane
	@echo "==> demo"
	@cd testenv && ../$(GORUN) ./cmd/demo

bench:
	@cd bench && $(GO) run ./cmd/bench

bench-controlplane: controlplane
	@cd bench && $(GO) run ./cmd/controlplane -pods 20000 -count 5 -json results/controlplane.json

# The same controller-runtime controller on controller-runtime's cache and on kinformer's
# (integrations/controllerruntime), 20,000 pods on the local control plane, separate processes.
bench-controllerruntime: controlplane
	@cd integrations/controllerruntime && $(GO) run ./cmd/crbench -pods 20000 -count 5

# Issue 13's memory scenarios at 20,000 pods: the floor of a sync, heap per pod of each
# variant, CPU of a projected sync, and the peak of a forced relist (bench/README.md).
bench-memory: controlplane
	@cd bench && $(GO) run ./cmd/controlplane -memory -pods 20000 -count 5 -json results/controlplane-memory.json

# The same memory figures at 10,000, 50,000 and 100,000 pods, on one control plane seeded
# straight into etcd (testenv's StoreObjects); about 8 minutes on the 2-core VM.
bench-scale: controlplane
	@cd bench && $(GO) run ./cmd/controlplane -scale -count 3 -json results/controlplane-scale.json

# Issue 22's outage-recovery: a kinformer and a client-go child process, ten ConfigMap informers
# each, lose the apiserver for 60 s, 3 times; how long after its readiness the last informer of
# each side watches again, with CPU and the first second's requests (bench/README.md).
bench-outage: controlplane
	@cd bench && $(GO) run ./cmd/controlplane -outage -count 3 -json results/controlplane-outage.json

# kubectl from k8s.io/kubectl at the control plane's release (bench/kubectl, a module of its
# own), into bin/kubectl: bench-cli's reference, built here rather than taken from the machine.
# The first build compiles about 900 packages (several minutes); later ones are cached.
KUBECTL_VERSION := v1.36.3
kubectl:
	@echo "==> kubectl $(KUBECTL_VERSION) (bench/kubectl, built once and cached)"
	@cd bench/kubectl && $(GO) build -trimpath -o ../../bin/kubectl \
		-ldflags "-X k8s.io/component-base/version.gitVersion=$(KUBECTL_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36" .

# Issue 26's command at 100,000 pods: `kinformer get pods -A` as names, a table and JSON
# against kubectl's, each a process timed from exec to exit with its peak RSS and CPU, 3 runs
# per side alternating, the output checked byte for byte against kubectl's (the table without
# AGE); pods seeded straight into etcd as in bench-scale (bench/README.md). About 30 minutes.
bench-cli: controlplane kubectl
	@cd bench && $(GO) run ./cmd/controlplane -cli-100k -count 3 -kubectl $(CURDIR)/bin/kubectl -json results/cli-100k.json

# Issue 25: the cost curve up to a million objects on one control plane, seeded straight into
# etcd (testenv's StoreObjects), the apiserver's watch cache off. The objects are ReplicaSets
# with a pod template (a million pods do not fit 24 GiB: the apiserver keeps every pod itself;
# -million-kind pods on a bigger machine). Per size every side in a child process, alternating
# (3 runs at a million, 1 at 10,000 and 100,000): the floor, kinformer's view, metadata-only and
# full objects, client-go full and without managedFields; a side that cannot fit is stopped at
# -cap-mb, reported as such and not run again at that size. Then the view's relist peak and
# warm restart at the largest size. It checks free memory and disk first and refuses with what
# it needs. About 42 minutes here (bench/README.md). Draws the curve into
# bench/million-curve.svg from the results.
bench-million: controlplane
	@cd bench && $(GO) run ./cmd/controlplane -million -count 3 -json results/controlplane-million.json
	@cd bench && $(GO) run ./cmd/curve -in results/controlplane-million.json -out million-curve.svg
