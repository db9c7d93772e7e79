# anthill — common tasks. The two set-up commands in the README are
# `make sandbox` (the main job) and `make test` (every test).

GO          ?= go
TOOLS_BIN   ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/anthill/tools/bin
STATICCHECK := $(TOOLS_BIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
# promtool checks and unit-tests the generated alerts (kube/monitoring); built
# from the Go module proxy into the tool cache, a few minutes cold.
PROMTOOL_VERSION ?= v0.316.0
PROMTOOL := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/anthill/tools/promtool-$(PROMTOOL_VERSION)/promtool

# The project version (see CONTRIBUTING.md): `anthill version` prints it and
# the image and manifests are tagged with it.
VERSION     := $(shell cat VERSION)
LDFLAGS     := -X github.com/gluster/anthill/cmd/internal/cli.Version=$(VERSION)
# Packages that start their own control plane each; run at most this many
# test binaries at once so two cores are not oversubscribed.
TEST_PARALLEL ?= 4
# The e2e package runs up to this many of its tests at once, each with its
# own namespace, simulator and operator on one control plane
# (e2e/test_env_e2e_test.go); its tests mostly wait.
E2E_PARALLEL ?= 6

.PHONY: all build image helm lint-yaml coverage controlplane promtool generate verify verify-generate lint test test-tools test-cold test-unit test-e2e sandbox bench bench-scale bench-engine bench-lookups chaos clean

all: build

## build: bin/anthill (the shipped operator binary), bin/kubectl-gluster (the admin's kubectl plugin:
## put bin/ on PATH and run `kubectl gluster`) and bin/anthill-dev (the sandbox and the GD2 simulator)
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ ./cmd/anthill ./cmd/kubectl-gluster ./cmd/anthill-dev

## image: the operator image quay.io/gluster/anthill:$(VERSION), built without a container engine
## into bin/image/oci (OCI image layout) and bin/image/anthill.tar; reproducible for a commit
image:
	hack/build-image.sh bin/image

## helm: build helm (pinned in tools/helm) and the helm-unittest plugin (pinned in tools/helm-unittest)
## into the per-user tool cache; the chart tests use them
helm:
	hack/build-helm.sh
	hack/build-helm-unittest.sh

## krew: the kubectl-gluster release archives and their krew manifest, with real checksums, in dist/
## (VERSION=v1.2.3; PLATFORMS and BASE_URL as hack/krew-release.sh says)
.PHONY: krew
krew:
	hack/krew-release.sh $(VERSION) dist

## release: everything a release ships into dist/release, publishing nothing (docs/install.md): the
## image for linux/amd64 and linux/arm64 (OCI layout, OCI archive, an archive per platform), chart
## package, krew archives and manifest, OLM bundle, manifests pinned by digest, SHA256SUMS.
## VERSION=v1.2.3 must be the tree's VERSION; DRY_RUN=1 (CI) for an unreleased VERSION
.PHONY: release
release:
	VERSION=$(VERSION) hack/release.sh dist/release

## controlplane: build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok into the per-user cache
controlplane:
	hack/build-controlplane.sh

## realnode: build kubelet and kube-proxy (pinned in tools/kubelet, the control plane's release) into
## the control plane's cache for the e2e suite's real node; containerd, runc and the CNI plugins are
## Debian's packages (docs/testing.md#a-real-node)
.PHONY: realnode
realnode:
	hack/build-realnode.sh

## gd2: build glusterd2 and glustercli (gluster/glusterd2 from ../shared/third_party/glusterd2, or the
## upstream clone ANTHILL_GD2_SOURCE) once into the per-user cache, for the real-GD2 tests
## (docs/testing.md#real-glusterd2); glusterfsd and the FUSE client are Debian's packages
.PHONY: gd2
gd2:
	hack/build-glusterd2.sh

## csi-driver: build the GD2-era CSI file driver (gluster/gluster-csi-driver from
## ../shared/third_party/gluster-csi-driver) once into the per-user cache, for the tests that run the
## real driver (docs/testing.md#the-real-csi-driver)
.PHONY: csi-driver
csi-driver:
	hack/build-csi-driver.sh

## generate: regenerate deepcopy, clientset, listers, informers, CRD YAML and the state-machine docs,
## manifests/monitoring and the chart's rule groups, and refresh the chart's copies of the CRDs and RBAC rules
## and admission policy and the OLM bundle (manifests/olm/bundle)
generate:
	hack/update-codegen.sh
	$(GO) run ./cmd/anthill diagram --write-docs docs/fsm
	$(GO) run ./cmd/anthill monitoring --write-manifests manifests/monitoring
	$(GO) run ./cmd/anthill monitoring --write-chart manifests/charts/anthill
	cp manifests/crds/operator.gluster.org_*.yaml manifests/charts/anthill/crds/
	cp manifests/rbac/cluster_role.yaml manifests/rbac/person_roles.yaml manifests/admission/csi_driver_policy.yaml manifests/charts/anthill/files/
	hack/olm.sh generate

## verify-generate: fail when committed generated files drift from their sources
verify-generate:
	hack/verify-codegen.sh
	hack/verify-fsm-docs.sh
	hack/verify-monitoring.sh
	hack/olm.sh verify
	@for f in manifests/crds/operator.gluster.org_*.yaml; do cmp -s "$$f" "manifests/charts/anthill/crds/$$(basename $$f)" || { echo "manifests/charts/anthill/crds is stale: run make generate"; exit 1; }; done
	@for f in cluster_role.yaml person_roles.yaml; do cmp -s "manifests/rbac/$$f" "manifests/charts/anthill/files/$$f" || { echo "manifests/charts/anthill/files is stale: run make generate"; exit 1; }; done
	@cmp -s manifests/admission/csi_driver_policy.yaml manifests/charts/anthill/files/csi_driver_policy.yaml || { echo "manifests/charts/anthill/files is stale: run make generate"; exit 1; }

## promtool: build promtool (for the alert tests) into the per-user tool cache
promtool: $(PROMTOOL)

$(PROMTOOL):
	cd / && GOBIN=$(dir $(PROMTOOL)) GOFLAGS= $(GO) install github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)

$(STATICCHECK):
	GOBIN=$(TOOLS_BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## lint: gofmt, go.mod tidiness, go vet, staticcheck (generated clients excluded: code-generator
## still emits the deprecated ListWatch fields)
lint: $(STATICCHECK)
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) vet -tags e2e ./...
	$(STATICCHECK) -tags e2e $$($(GO) list -tags e2e ./... | grep -v /kube/client/)
	cd tools/image && $(GO) vet ./... && $(STATICCHECK) ./...
	cd tools/olm && $(GO) vet ./...

## docs: the documentation site from docs/ into dist/site, failing on any warning, with its Mermaid
## diagrams drawn; installs its pinned tools when missing (hack/docs.sh: Debian's mkdocs and
## python3-pymdownx, mermaid from npm into the tool cache); preview with `mkdocs serve` after it
.PHONY: docs
docs:
	hack/docs.sh dist/site

## lint-yaml: yamllint (Debian's package) over manifests/, the chart and the repository's own YAML
lint-yaml:
	yamllint --strict -c .yamllint.yaml manifests .github .yamllint.yaml

## test: every test — unit, integration on a real control plane, and e2e with the operator binary
## (E2E_PARALLEL e2e tests at once); ends with the ten slowest tests and the wall time
test: test-tools
	PROMTOOL=$(PROMTOOL) GO=$(GO) TEST_PARALLEL=$(TEST_PARALLEL) E2E_PARALLEL=$(E2E_PARALLEL) hack/test.sh

## test-tools: the tools make test needs built before it starts (make test-cold times them apart)
test-tools: controlplane $(PROMTOOL) helm

## test-cold: make test as on a fresh machine: empty Go build, module and tool caches of its own
## (under a temporary directory, removed after; COLD_KEEP=1 keeps it), the module proxy still used;
## prints the wall time of the tool builds and of the tests apart (about an hour on two cores)
test-cold:
	MAKE=$(MAKE) GO=$(GO) TEST_PARALLEL=$(TEST_PARALLEL) E2E_PARALLEL=$(E2E_PARALLEL) hack/test-cold.sh

## test-unit: only the tests that need no control plane, the architecture tests (e2e/architecture) among them
test-unit: $(PROMTOOL)
	PROMTOOL=$(PROMTOOL) $(GO) test -race $$(hack/unit-packages.sh)

## coverage: the unit tests with per-package coverage, each held to its floor in hack/coverage-floor.txt
coverage: $(PROMTOOL)
	PROMTOOL=$(PROMTOOL) hack/check-coverage.sh

## sandbox: the main job — a real control plane, the GD2 simulator, the operator and a sample cluster with two volumes under write load
## REAL_NODE=1 adds a real node (kubelet, containerd, runc; root) to run images on (docs/testing.md#a-real-node)
sandbox: controlplane build $(if $(REAL_NODE),realnode)
	bin/anthill-dev sandbox up $(if $(REAL_NODE),--real-node)

## chaos: the crash sweep (docs/testing.md#the-crash-sweep), not part of `make test`: the lifecycle
## (create, decommission with brick moves, upgrade, delete) run fault-free to record its transitions,
## then once per chosen k with the operator SIGKILLed right after transition k and restarted.
## CRASH_K=all (default: every k, about 1 min each), CRASH_K=sample (every transition before a
## destructive step, and every CRASH_EVERY-th), or CRASH_K=3,17,40. Prints a summary (k, transition,
## duration, result).
CRASH_K       ?= all
CRASH_EVERY   ?= 5
## CRASH_PARALLEL runs go side by side, each with its own namespace, simulator and operator.
CRASH_PARALLEL ?= 4
CHAOS_TIMEOUT ?= 12h
## DURATION=5m runs the chaos soak instead (TestChaosSoak): random decommissions, maintenance,
## upgrades, pod and GlusterNode deletions, scaling and Kubernetes node losses for that long, under
## client writes, the simulator's chaos faults and operator kills, then convergence after a quiet
## period; prints the operations, kills, writes, faults and violations (SEED= repeats a run).
DURATION      ?=
SEED          ?=
chaos: controlplane
ifeq ($(DURATION),)
	ANTHILL_CRASH_SWEEP=1 ANTHILL_CRASH_K=$(CRASH_K) ANTHILL_CRASH_EVERY=$(CRASH_EVERY) \
		$(GO) test -race -count=1 -tags e2e -run '^TestCrashSweep$$' -parallel $(CRASH_PARALLEL) -v -timeout $(CHAOS_TIMEOUT) ./e2e
else
	ANTHILL_CHAOS_DURATION=$(DURATION) ANTHILL_CHAOS_SEED=$(SEED) \
		$(GO) test -race -count=1 -tags e2e -run '^TestChaosSoak$$' -v -timeout $(CHAOS_TIMEOUT) ./e2e
endif

## bench: benchmarks that print ratios against a baseline measured in the same run, then bench-engine
bench: controlplane bench-engine bench-lookups
	ANTHILL_E2E_RACE=0 $(GO) test -tags e2e -run '^$$' -bench . -benchtime 1x -timeout 60m ./e2e/...

## bench-scale: one operator holding a growing fleet of 10-node clusters, in steps
## (SCALE_STEPS GlusterNodes, default 100,1000): bring-up against plain
## StatefulSets, RSS and where the heap goes (its profiles saved under ANTHILL_SCALE_PROFILES),
## steady API writes, GD2 calls and CPU, reaction, restart; SCALE_GOMEMLIMIT (e.g. 120MiB) is
## the operator's soft memory limit
SCALE_STEPS ?= 100,1000
SCALE_GOMEMLIMIT ?=
bench-scale: controlplane
	ANTHILL_E2E_RACE=0 ANTHILL_SCALE_STEPS=$(SCALE_STEPS) ANTHILL_SCALE_GOMEMLIMIT=$(SCALE_GOMEMLIMIT) $(GO) test -tags e2e -run '^$$' -bench Scale -benchtime 1x -timeout 240m ./e2e/

## bench-lookups: finding a cluster's PersistentVolumes among 1,000 clusters' by the index,
## against comparing every PV, in the same run (docs/performance.md)
bench-lookups:
	$(GO) test -run '^$$' -bench ClusterPVs -benchtime 100x ./kube/machines/cluster

## bench-engine: the dispatcher's throughput on fake clients, in transitions per second per core
## (target >= 20,000; docs/performance.md)
bench-engine:
	$(GO) test -run '^$$' -bench DispatcherTransitions -benchtime 200000x ./kube/engine

clean:
	rm -rf bin dist
