#!/usr/bin/env bash
# Fuzzing/ci.sh [SECONDS]: CI's short fuzzing budget. Builds the fuzz targets once, then runs
# each for SECONDS (30 by default) from its committed seeds; fails on any crash, property
# violation, leak, timeout or out-of-memory (run.sh keeps the input under Fuzzing/FailCases).
# The committed corpus and every past crash are also replayed by `swift test --enable-all-traits`
# (FuzzCorpusReplayTests), so this step only looks for new failures.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
Fuzzing/run.sh --build
failed=()
for target in $(Fuzzing/run.sh --list); do
    echo "--- $target (${seconds}s)"
    Fuzzing/run.sh "$target" "$seconds" || failed+=("$target")
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzzing found failures in: ${failed[*]} (inputs in Fuzzing/FailCases/)" >&2
    exit 1
fi
