#!/bin/sh
# Runs a pinned release of karpenter-guard without compiling it: the release archive for this machine
# is downloaded once, checked against the release's checksums.txt (as the GitHub Action does), kept in
# a cache, and run with the arguments given. Nothing that fails the check is unpacked or run.
#
#   hack/install-release.sh check -f deploy/          # the pre-commit hooks karpenter-guard-release*
#   hack/install-release.sh --install-only            # print the verified binary's path, run nothing
#
# Environment:
#   KARPENTER_GUARD_VERSION   the release, vX.Y.Z (default below: the release this revision documents)
#   KARPENTER_GUARD_RELEASES  where releases are downloaded from, one directory per tag
#                             (default https://github.com/karpenter-guard/karpenter-guard/releases/download)
#   KARPENTER_GUARD_CACHE     where verified binaries are kept
#                             (default ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-guard/releases)
#
# Exit codes: karpenter-guard's own once it runs; 2 when it cannot be installed (as karpenter-guard
# exits 2 when a run fails), with the reason on stderr.
set -eu

default_version=v0.1.0
version=${KARPENTER_GUARD_VERSION:-$default_version}
releases=${KARPENTER_GUARD_RELEASES:-https://github.com/karpenter-guard/karpenter-guard/releases/download}
cache=${KARPENTER_GUARD_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/karpenter-guard/releases}

fail() {
	echo "karpenter-guard install: $*" >&2
	exit 2
}

# The version names a directory and a file: only a release tag's characters.
case "$version" in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) fail "KARPENTER_GUARD_VERSION=$version: expected a release tag such as $default_version" ;;
esac
case "$version" in
*[!0-9A-Za-z.-]*) fail "KARPENTER_GUARD_VERSION=$version: expected a release tag such as $default_version" ;;
esac
number=${version#v}

case "$(uname -s)" in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) fail "no release archive for $(uname -s): releases are built for Linux and macOS; install with go install instead" ;;
esac
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) fail "no release archive for $(uname -m): releases are built for amd64 and arm64; install with go install instead" ;;
esac

bin="$cache/$version/${os}_$arch/karpenter-guard"

if [ ! -x "$bin" ]; then
	archive="karpenter-guard_${number}_${os}_$arch.tar.gz"
	base="$releases/$version"
	mkdir -p "$cache/$version/${os}_$arch" || fail "cannot create the cache $cache (set KARPENTER_GUARD_CACHE)"
	# A directory of its own beside the binary: the last step is a rename, so that hooks running side
	# by side never run a half-written binary.
	work=$(mktemp -d "$cache/$version/${os}_$arch/download.XXXXXX") || fail "cannot write in the cache $cache"
	trap 'rm -rf "$work"' EXIT
	trap 'exit 2' HUP INT TERM

	download() { # URL FILE
		if command -v curl >/dev/null 2>&1; then
			curl -fsSL --retry 3 -o "$2" "$1"
		elif command -v wget >/dev/null 2>&1; then
			wget -q -O "$2" "$1"
		else
			fail "neither curl nor wget is installed: one is needed to download $1"
		fi
	}
	download "$base/$archive" "$work/$archive" || fail "cannot download $base/$archive: is $version a release?"
	download "$base/checksums.txt" "$work/checksums.txt" || fail "cannot download $base/checksums.txt"

	want=$(awk -v a="$archive" '$2 == a { print $1 }' "$work/checksums.txt")
	case "$want" in
	"") fail "$base/checksums.txt has no line for $archive: nothing was installed" ;;
	*[!0-9a-f]*) fail "$base/checksums.txt: the line for $archive is not one SHA-256 sum: nothing was installed" ;;
	esac
	[ ${#want} -eq 64 ] || fail "$base/checksums.txt: the line for $archive is not one SHA-256 sum: nothing was installed"
	if command -v sha256sum >/dev/null 2>&1; then
		got=$(sha256sum "$work/$archive" | awk '{ print $1 }')
	elif command -v shasum >/dev/null 2>&1; then
		got=$(shasum -a 256 "$work/$archive" | awk '{ print $1 }')
	else
		fail "neither sha256sum nor shasum is installed: the archive cannot be checked, so it is not installed"
	fi
	[ "$got" = "$want" ] || fail "$archive has SHA-256 $got but the release's checksums.txt says $want: the download is not the release's, nothing was installed or run"

	tar -xzf "$work/$archive" -C "$work" karpenter-guard || fail "$archive holds no karpenter-guard binary"
	chmod 0755 "$work/karpenter-guard"
	mv -f "$work/karpenter-guard" "$bin" || fail "cannot move the binary into $cache"
	rm -rf "$work"
	trap - EXIT HUP INT TERM
fi

if [ "${1:-}" = "--install-only" ]; then
	echo "$bin"
	exit 0
fi
exec "$bin" "$@"
