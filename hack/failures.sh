#!/bin/sh
# failures.sh runs a `go test` command line, printing its output as it comes, and on failure prints the
# failed tests' messages again at the end: CI shows a log's tail, and in the end-to-end suite the
# messages of a failed test are otherwise buried under the logs of the tests after it.
log=$(mktemp) || exit 2
trap 'rm -f "$log" "$log.rc"' EXIT
{ "$@" 2>&1; echo $? >"$log.rc"; } | tee "$log"
rc=$(cat "$log.rc")
if [ "$rc" != 0 ]; then
	echo
	echo "=== what failed (repeated from above) ==="
	awk '/^(--- FAIL|panic:|FAIL|ok )/ { keep = /^--- FAIL|^panic:/; if (keep) print; next }
	     keep && /^(    |\t|goroutine )/ { print; next }
	     { keep = 0 }' "$log" | head -200
fi
exit "$rc"
