# anthill — common tasks. The two set-up commands in the README are
# `make sandbox` (the main job) and `make test` (every test).

GO          ?= go
TOOLS_BIN   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/anthill/tools/bin
STATICCHECK := $(TOOLS_BIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
# Packages that start their own control plane each; run at most this many
# test binaries at once so two cores are not oversubscribed.
TEST_PARALLEL ?= 4

.PHONY: all build controlplane generate verify verify-generate lint test test-unit test-e2e sandbox bench clean

all: build

## build: bin/anthill (the shipped operator binary), bin/kubectl-gluster (the admin's kubectl plugin:
## put bin/ on PATH and run `kubectl gluster`) and bin/anthill-dev (the sandbox and the GD2 simulator)
build:
	$(GO) build -o bin/ ./cmd/anthill ./cmd/kubectl-gluster ./cmd/anthill-dev

## krew: the kubectl-gluster release archives and their krew manifest, with real checksums, in dist/
## (VERSION=v1.2.3; PLATFORMS and BASE_URL as hack/krew-release.sh says)
VERSION ?= v0.1.0
.PHONY: krew
krew:
	hack/krew-release.sh $(VERSION) dist

## controlplane: build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok into the per-user cache
controlplane:
	hack/build-controlplane.sh

## generate: regenerate deepcopy, clientset, listers, informers, CRD YAML and the state-machine docs
generate:
	hack/update-codegen.sh
	$(GO) run ./cmd/anthill diagram --write-docs docs/fsm

## verify-generate: fail when committed generated files drift from their sources
verify-generate:
	hack/verify-codegen.sh
	hack/verify-fsm-docs.sh

$(STATICCHECK):
	GOBIN=$(TOOLS_BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## lint: gofmt, go.mod tidiness, go vet, staticcheck (generated clients excluded: code-generator
## still emits the deprecated ListWatch fields)
lint: $(STATICCHECK)
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet -tags e2e ./...
	$(STATICCHECK) -tags e2e $$($(GO) list -tags e2e ./... | grep -v /kube/client/)

## test: every test — unit, integration on a real control plane, and e2e with the operator binary
test: controlplane
	$(GO) test -race -tags e2e -p $(TEST_PARALLEL) -timeout 45m ./...

## test-unit: only the tests that need no control plane
test-unit:
	$(GO) test -race $$($(GO) list ./... | grep -v /e2e)

## sandbox: the main job — a real control plane, the GD2 simulator, the operator and a sample cluster with two volumes under write load
sandbox: controlplane build
	bin/anthill-dev sandbox up

## bench: benchmarks that print ratios against a baseline measured in the same run
bench: controlplane
	$(GO) test -tags e2e -run '^$$' -bench . -benchtime 1x -timeout 60m ./e2e/...

clean:
	rm -rf bin dist
