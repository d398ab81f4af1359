# e2e/tools/tools.mk: the binaries and manifests the end-to-end suite runs against,
# built from pinned modules with nothing but Go and the module proxy.
#
#   make e2e-deps        build kube-apiserver, kubectl, etcd and helm, fetch the Karpenter CRDs
#   make -s e2e-env      print `export KUBE_APISERVER=...` lines for a shell (eval "$(make -s e2e-env)")
#   make e2e-deps-clean  drop this version set from the cache
#
# Everything lands in a per-user cache outside the work tree, keyed by the pinned
# versions, and each file is built only when it is missing: a second run, or a fresh
# clone on the same machine, costs seconds. KUBE_APISERVER, KUBECTL, ETCD, HELM and
# KARPENTER_CRDS are exported to every recipe's environment, where the tests read them.
# The versions here must match e2e/tools/go.mod and e2e/tools/helm/go.mod.

E2E_TOOLS_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
_e2e_default_goal := $(.DEFAULT_GOAL)

E2E_KUBE_VERSION      := v1.33.4
E2E_KUBE_DATE         := 2025-08-13T19:47:09Z
E2E_ETCD_VERSION      := v3.5.21
E2E_KARPENTER_VERSION := v1.14.1
# helm v3, the line most clusters' pipelines run, from its own module (e2e/tools/helm): its
# Kubernetes libraries are newer than the API server's, and one module would force one set on both.
# E2E_HELM_KUBE_MINOR is the minor of that module's k8s.io/client-go (v0.37 is Kubernetes 1.37): what
# helm's release build stamps as the default .Capabilities.KubeVersion of `helm template`.
E2E_HELM_VERSION      := v3.22.0
E2E_HELM_KUBE_MINOR   := 37

E2E_CACHE      ?= $(HOME)/.cache/karpenter-guard/e2e
E2E_BIN        ?= $(E2E_CACHE)/bin/kube-$(E2E_KUBE_VERSION)_etcd-$(E2E_ETCD_VERSION)
KUBE_APISERVER ?= $(E2E_BIN)/kube-apiserver
KUBECTL        ?= $(E2E_BIN)/kubectl
ETCD           ?= $(E2E_BIN)/etcd
HELM           ?= $(E2E_CACHE)/bin/helm-$(E2E_HELM_VERSION)/helm
KARPENTER_CRDS ?= $(E2E_CACHE)/crds/karpenter-$(E2E_KARPENTER_VERSION)
export KUBE_APISERVER KUBECTL ETCD HELM KARPENTER_CRDS

# The tools module is its own module: never a workspace, never rewritten by a build.
E2E_GO := cd $(E2E_TOOLS_DIR) && GOWORK=off GOTOOLCHAIN=local GOFLAGS='-mod=readonly -buildvcs=false' CGO_ENABLED=0 $(GO)
E2E_HELM_GO := cd $(E2E_TOOLS_DIR)/helm && GOWORK=off GOTOOLCHAIN=local GOFLAGS='-mod=readonly -buildvcs=false' CGO_ENABLED=0 $(GO)

# What hack/lib/version.sh stamps into a release, so `--version` tells the truth.
_e2e_kube_x = -X $(1).gitVersion=$(E2E_KUBE_VERSION) -X $(1).gitMajor=1 -X $(1).gitMinor=33 \
	-X $(1).gitTreeState=clean -X $(1).buildDate=$(E2E_KUBE_DATE)
E2E_KUBE_LDFLAGS := -s -w $(call _e2e_kube_x,k8s.io/component-base/version) $(call _e2e_kube_x,k8s.io/client-go/pkg/version)
E2E_ETCD_LDFLAGS := -s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$(E2E_ETCD_VERSION)
# What helm's Makefile stamps: its version, and the Kubernetes version it lints and templates for.
_e2e_helm_kube = -X helm.sh/helm/v3/pkg/$(1).k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/$(1).k8sVersionMinor=$(E2E_HELM_KUBE_MINOR)
E2E_HELM_LDFLAGS := -s -w -X helm.sh/helm/v3/internal/version.version=$(E2E_HELM_VERSION) \
	-X helm.sh/helm/v3/internal/version.gitTreeState=clean \
	$(call _e2e_helm_kube,chartutil) $(call _e2e_helm_kube,lint/rules)

.PHONY: e2e-deps e2e-env e2e-deps-clean

e2e-deps: $(KUBE_APISERVER) $(KUBECTL) $(ETCD) $(HELM) $(KARPENTER_CRDS)/.complete ## kube-apiserver, kubectl, etcd, helm and the Karpenter CRDs, cached

e2e-env: ## shell export lines for the e2e binaries (eval "$(make -s e2e-env)")
	@echo 'export KUBE_APISERVER=$(KUBE_APISERVER)'
	@echo 'export KUBECTL=$(KUBECTL)'
	@echo 'export ETCD=$(ETCD)'
	@echo 'export HELM=$(HELM)'
	@echo 'export KARPENTER_CRDS=$(KARPENTER_CRDS)'

e2e-deps-clean: ## remove this version set's cached binaries and CRDs
	rm -rf '$(E2E_BIN)' '$(dir $(HELM))' '$(KARPENTER_CRDS)'

# Each binary is written beside its final name and renamed into place, so an
# interrupted build never leaves a file that make would take as done.
$(KUBE_APISERVER):
	@mkdir -p '$(@D)'
	$(E2E_GO) build -trimpath -ldflags '$(E2E_KUBE_LDFLAGS)' -o '$(abspath $@).tmp' k8s.io/kubernetes/cmd/kube-apiserver
	@mv -f '$@.tmp' '$@'

$(KUBECTL):
	@mkdir -p '$(@D)'
	$(E2E_GO) build -trimpath -ldflags '$(E2E_KUBE_LDFLAGS)' -o '$(abspath $@).tmp' k8s.io/kubernetes/cmd/kubectl
	@mv -f '$@.tmp' '$@'

$(ETCD):
	@mkdir -p '$(@D)'
	$(E2E_GO) build -trimpath -ldflags '$(E2E_ETCD_LDFLAGS)' -o '$(abspath $@).tmp' ./cmd/etcd
	@mv -f '$@.tmp' '$@'

# helm from helm.sh/helm/v3's cmd/helm, the module pinned in e2e/tools/helm/go.mod (a `tool`).
$(HELM):
	@mkdir -p '$(@D)'
	$(E2E_HELM_GO) build -trimpath -ldflags '$(E2E_HELM_LDFLAGS)' -o '$(abspath $@).tmp' helm.sh/helm/v3/cmd/helm
	@mv -f '$@.tmp' '$@'

# The CRDs come from the released module's source through the proxy: copied out of
# the read-only module cache into a directory of their own, then marked complete.
$(KARPENTER_CRDS)/.complete:
	@set -e; \
	json=$$(cd $(E2E_TOOLS_DIR) && GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly \
	  $(GO) mod download -json github.com/aws/karpenter-provider-aws@$(E2E_KARPENTER_VERSION)) || { echo "$$json" >&2; exit 1; }; \
	dir=$$(printf '%s\n' "$$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p'); \
	test -d "$$dir/pkg/apis/crds" || { echo "no pkg/apis/crds in $$dir" >&2; exit 1; }; \
	rm -rf '$(KARPENTER_CRDS).tmp' '$(KARPENTER_CRDS)'; mkdir -p '$(KARPENTER_CRDS).tmp'; \
	cp "$$dir"/pkg/apis/crds/*.yaml '$(KARPENTER_CRDS).tmp/'; chmod -R u+w '$(KARPENTER_CRDS).tmp'; \
	touch '$(KARPENTER_CRDS).tmp/.complete'; mv '$(KARPENTER_CRDS).tmp' '$(KARPENTER_CRDS)'; \
	echo "Karpenter $(E2E_KARPENTER_VERSION) CRDs in $(KARPENTER_CRDS)"

# Including this file must not change the including Makefile's default goal.
.DEFAULT_GOAL := $(_e2e_default_goal)
