# karpenter-guard: everything a fresh machine with Go needs goes through these targets.
GO       ?= go
export GOTOOLCHAIN := local
export GOFLAGS     := -buildvcs=false

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
include e2e/tools/tools.mk
include hack/release.mk

.PHONY: all build test unit lint chart e2e bench-e2e bench-overhead bench loadgen report-crds karpenter-crds fuzz readme clean

all: build

build: ## the CLI binary in bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/karpenter-guard ./cmd/karpenter-guard

test: lint unit release-check e2e ## every test the project has (CI runs exactly this)

unit: ## unit, golden, CLI and fuzz-seed tests
	@hack/failures.sh $(GO) test -count=1 ./...

lint: ## go vet plus a gofmt check
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

chart: $(HELM) ## helm lint --strict of charts/karpenter-guard with each values file of its ci/ (make e2e also renders, compares with manifests/ and installs it)
	@set -e; for f in charts/karpenter-guard/ci/*-values.yaml; do $(HELM) lint --strict charts/karpenter-guard -f $$f; done

e2e: e2e-deps ## end to end: etcd, kube-apiserver, kubectl, helm, the Karpenter CRDs and karpenter-guard serve (built and cached by e2e-deps)
	@hack/failures.sh $(GO) test -count=1 -tags e2e -timeout 20m ./e2e/

bench-e2e: e2e-deps ## the audit of 10,000 objects stored in the real API server, for BENCHMARKS.md
	$(GO) test -count=1 -tags e2e -run '^$$' -bench Audit10k -benchtime 2x -timeout 30m ./e2e/

bench-overhead: e2e-deps ## what the webhook adds to a server-side dry-run through the real API server, for BENCHMARKS.md
	$(GO) test -count=1 -tags e2e -run '^$$' -bench DryRunOverhead -benchtime 1x -timeout 20m ./e2e/

bench: ## benchmarks whose figures go into BENCHMARKS.md
	$(GO) test -run '^$$' -bench . -benchmem ./validators ./userdata ./objects ./cmd/karpenter-guard ./facts/live ./webhook

loadgen: ## the webhook under load (p50, p99, throughput against a bare handler) for BENCHMARKS.md
	GOGC=400 $(GO) run ./hack/loadgen -duration 10s -rounds 5 -warmup 2s -concurrency 1,16,64 # GOGC as manifests/base sets it

KYVERNO_VERSION := v1.19.1
report-crds: ## copy the wgpolicyk8s.io/v1alpha2 report CRDs from Kyverno's module into manifests/crds and the chart
	@dir=$$($(GO) mod download -json github.com/kyverno/kyverno@$(KYVERNO_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p'); \
	for f in wgpolicyk8s.io_policyreports.yaml wgpolicyk8s.io_clusterpolicyreports.yaml; do \
	  { echo "# wgpolicyk8s.io/v1alpha2 CRD, copied unchanged from github.com/kyverno/kyverno@$(KYVERNO_VERSION) config/crds/policyreport/$$f"; \
	    echo "# (the Policy Report API of the Kubernetes Policy WG; \`make report-crds\` copies it again)."; \
	    cat "$$dir/config/crds/policyreport/$$f"; } > manifests/crds/$$f; \
	  cp manifests/crds/$$f charts/karpenter-guard/files/$$f; done

# The NodePool and EC2NodeClass CRDs `check` validates against (crds/karpenter), from the Karpenter
# release the e2e suite runs (E2E_KARPENTER_VERSION in e2e/tools/tools.mk); the e2e suite checks that
# the two agree.
karpenter-crds: ## copy the Karpenter CRDs of E2E_KARPENTER_VERSION from its module into crds/karpenter
	@set -e; dir=$$(cd $(E2E_TOOLS_DIR) && GOWORK=off GOFLAGS=-mod=readonly $(GO) mod download -json github.com/aws/karpenter-provider-aws@$(E2E_KARPENTER_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p'); \
	for f in karpenter.sh_nodepools.yaml karpenter.k8s.aws_ec2nodeclasses.yaml; do \
	  { echo "# Karpenter $(E2E_KARPENTER_VERSION) CRD, copied unchanged from github.com/aws/karpenter-provider-aws@$(E2E_KARPENTER_VERSION) pkg/apis/crds/$$f"; \
	    echo "# (\`make karpenter-crds\` copies it again)."; \
	    cat "$$dir/pkg/apis/crds/$$f"; } > crds/karpenter/$$f.tmp; mv crds/karpenter/$$f.tmp crds/karpenter/$$f; done

FUZZTIME ?= 30s
# Minimising a new input defaults to 60 s, more than a 30 s run: bounded, a run fuzzes rather than
# minimises.
FUZZMINIMIZETIME ?= 5s
# Every fuzz target, as package:Function.
FUZZ_TARGETS := manifest:FuzzParse \
	manifest:FuzzParseIgnore \
	manifest:FuzzKustomization \
	userdata:FuzzParse \
	userdata:FuzzRegisters \
	awsauth:FuzzParse \
	fix:FuzzFix \
	facts:FuzzDecodeSnapshot \
	facts:FuzzFoldLookups \
	facts:FuzzWildcard \
	webhook:FuzzReview \
	objects:FuzzFromJSON \
	objects:FuzzContent \
	validators/rules:FuzzReadTrust \
	internal/fakeaws:FuzzPolicy
fuzz: ## run every fuzz target for FUZZTIME each
	@set -e; for t in $(FUZZ_TARGETS); do \
	  echo "fuzz ./$${t%%:*} $${t#*:}"; \
	  $(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./$${t%%:*}; \
	done

readme: ## regenerate the README rule table and the golden files from the catalog
	$(GO) test ./... -run 'TestReadme|Golden' -update

clean:
	rm -rf bin dist
