# kinformer — see README.md. Every target works on a machine that has only Go.
GO        ?= go
# Every Go module in the repo; a module is a directory with a go.mod.
MODULES   := $(patsubst %/go.mod,%,$(wildcard go.mod */go.mod))
MODULES   := $(patsubst go.mod,.,$(MODULES))
TESTFLAGS ?= -race -count=1 -timeout 30m

.PHONY: all test fmt-check vet unit controlplane demo bench bench-controlplane help

all: test

help:
	@echo "make test   - gofmt check, go vet and go test -race over every module ($(MODULES))"
	@echo "make demo   - local control plane + workload + live kinformer caches"
	@echo "make bench  - kinformer vs client-go, side by side (in-memory scenarios)"
	@echo "make bench-controlplane - scenario 7: 20,000 pods synced from the local control plane"

test: fmt-check vet unit

fmt-check:
	@echo "==> gofmt"
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	@for m in $(MODULES); do echo "==> go vet ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

# The local control plane (etcd + kube-apiserver compiled from their Go modules) that the
# end-to-end tests and the demo run. The first build compiles about 2,100 packages (minutes on a
# small machine) and prints its progress; later runs find the cached binaries at once.
controlplane:
	@echo "==> control plane (etcd + kube-apiserver, built once and cached)"
	@cd testenv && $(GO) run ./cmd/controlplane build

unit: controlplane
	@for m in $(MODULES); do echo "==> go test $(TESTFLAGS) ($$m)"; (cd $$m && $(GO) test $(TESTFLAGS) ./...) || exit 1; done

demo: controlplane
	@echo "==> building the demo (the first run also compiles client-go: a minute or two)"
	@cd testenv && $(GO) run ./cmd/demo

bench:
	@cd bench && $(GO) run ./cmd/bench

bench-controlplane: controlplane
	@cd bench && $(GO) run ./cmd/controlplane -pods 20000 -count 5 -json results/controlplane.json
