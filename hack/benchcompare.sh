#!/usr/bin/env bash
# benchcompare runs the Go benchmarks of BENCHMARKS.md on two revisions in alternating rounds (before
# then after in one round, after then before in the next), so that a drift of a shared machine weighs
# on both alike, and prints benchstat's comparison.
#
#   hack/benchcompare.sh BEFORE AFTER [ROUNDS] [PATTERN]
#
# BEFORE and AFTER are git revisions; AFTER may be "." for the working tree. ROUNDS defaults to 5.
# PATTERN is the -bench pattern (default: every benchmark BENCHMARKS.md reports without an API server).
# Outputs go to $OUT (default: a temporary directory): before.txt, after.txt, benchstat.txt.
set -euo pipefail

before=${1:?usage: hack/benchcompare.sh BEFORE AFTER [ROUNDS] [PATTERN]}
after=${2:?usage: hack/benchcompare.sh BEFORE AFTER [ROUNDS] [PATTERN]}
rounds=${3:-5}
pattern=${4:-'^Benchmark(Evaluate|EvaluateWithFacts|Parse|FromJSON|Validate|LookupWarm|EvaluateWarm|Check10k)$'}
out=${OUT:-$(mktemp -d)}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)

trees=()
cleanup() {
	for t in "${trees[@]}"; do git -C "$root" worktree remove --force "$t" >/dev/null 2>&1 || true; done
	rm -rf "$work"
}
trap cleanup EXIT

tree() { # tree NAME REV: a checkout of REV ("." is the working tree itself)
	if [ "$2" = . ]; then
		echo "$root"
		return
	fi
	git -C "$root" worktree add -q --detach "$work/$1" "$2"
	trees+=("$work/$1")
	echo "$work/$1"
}
dir_before=$(tree before "$before")
dir_after=$(tree after "$after")

run() { # run NAME DIR: one round of every benchmark, appended to $out/NAME.txt
	(cd "$2" && go test -run '^$' -bench "$pattern" -benchmem -count 1 ./... 2>&1) |
		grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$out/$1.txt"
}

: >"$out/before.txt"
: >"$out/after.txt"
# Build every test binary first, so no round pays for compiling.
(cd "$dir_before" && go test -run '^$' -bench '^$' ./... >/dev/null)
(cd "$dir_after" && go test -run '^$' -bench '^$' ./... >/dev/null)
for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then
		run before "$dir_before"
		run after "$dir_after"
	else
		run after "$dir_after"
		run before "$dir_before"
	fi
	echo "round $r of $rounds done" >&2
done
go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$out/before.txt" "$out/after.txt" | tee "$out/benchstat.txt"
echo "outputs in $out" >&2
