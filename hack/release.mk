# hack/release.mk: release archives, checksums, SBOMs, images and the krew manifest, made by GoReleaser
# from .goreleaser.yaml. GoReleaser itself is built from the pinned tools module hack/tools/goreleaser
# through the module proxy, like the e2e binaries (e2e/tools/tools.mk).
#
#   make release-check     validate .goreleaser.yaml (part of `make test`)
#   make release-snapshot  build every archive of a release into dist/, publish nothing, and check them
#   make goreleaser        only build GoReleaser into the cache
#
# GoReleaser is built once per version into a per-user cache outside the work tree, and only when it
# is missing. GORELEASER_VERSION must match hack/tools/goreleaser/go.mod. It is v2.16.0, not the
# newest release: v2.17.0 and later need a module host the module proxy of the build machines does not
# serve (go.digitalxero.dev, for MSIX packages), and v2.18 needs Go 1.27. `go mod tidy` in the tools
# module fails for the same host (a test of nfpm imports it); the build itself never loads it.

RELEASE_TOOLS_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))/tools/goreleaser
_release_default_goal := $(.DEFAULT_GOAL)

GORELEASER_VERSION := v2.16.0
TOOLS_CACHE        ?= $(HOME)/.cache/karpenter-guard/tools
GORELEASER         ?= $(TOOLS_CACHE)/goreleaser-$(GORELEASER_VERSION)/goreleaser

# GoReleaser runs `go build` for every target: the local toolchain, as everywhere else in this Makefile.
RELEASE_GO := cd $(RELEASE_TOOLS_DIR) && GOWORK=off GOTOOLCHAIN=local GOFLAGS='-mod=readonly -buildvcs=false' CGO_ENABLED=0 $(GO)

.PHONY: goreleaser release-check release-snapshot

goreleaser: $(GORELEASER) ## GoReleaser GORELEASER_VERSION, built into the cache

# Written beside its final name and renamed into place, so an interrupted build never leaves a file
# make would take as done. The -X values are what GoReleaser's own release stamps, for `--version`.
$(GORELEASER):
	@mkdir -p '$(@D)'
	$(RELEASE_GO) build -trimpath -ldflags '-s -w -X main.version=$(GORELEASER_VERSION) -X main.builtBy=karpenter-guard-make' \
	  -o '$(abspath $@).tmp' github.com/goreleaser/goreleaser/v2
	@mv -f '$@.tmp' '$@'

release-check: $(GORELEASER) ## validate .goreleaser.yaml
	'$(GORELEASER)' check

# A snapshot builds, archives and checksums every platform from the work tree as it is, tags or not,
# and publishes nothing. No Docker engine and no syft are needed: images and SBOMs are skipped.
release-snapshot: $(GORELEASER) ## every release archive and checksums.txt in dist/, checked; nothing published
	'$(GORELEASER)' release --snapshot --clean --skip=docker,sbom,publish,sign
	@set -e; \
	version=$$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json); \
	test -n "$$version" || { echo "no version in dist/metadata.json" >&2; exit 1; }; \
	for p in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do \
	  a=karpenter-guard_$${version}_$$p.tar.gz; \
	  test -f "dist/$$a" || { echo "dist/$$a is missing" >&2; exit 1; }; \
	  grep -q "  $$a\$$" dist/checksums.txt || { echo "dist/checksums.txt does not list $$a" >&2; exit 1; }; \
	done; \
	(cd dist && sha256sum --quiet -c checksums.txt); \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	tar -xzf dist/karpenter-guard_$${version}_linux_amd64.tar.gz -C "$$tmp"; \
	for f in karpenter-guard LICENSE README.md; do test -f "$$tmp/$$f" || { echo "the linux_amd64 archive has no $$f" >&2; exit 1; }; done; \
	got=$$("$$tmp/karpenter-guard" --version); \
	case "$$got" in "karpenter-guard v$$version (commit "*) ;; \
	  *) echo "karpenter-guard --version printed \"$$got\", want version v$$version" >&2; exit 1;; esac; \
	echo "dist/: 4 archives and checksums.txt for $$version; $$got"

# Including this file must not change the including Makefile's default goal.
.DEFAULT_GOAL := $(_release_default_goal)
