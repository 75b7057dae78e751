#!/usr/bin/env bash
# Re-records the static thresholds in Thresholds/ for the ordo-one suites, the
# documented way (`benchmark thresholds update`), then drops the throughput
# entries: in benchmark 1.38.1 the update writes throughput's raw 90th
# percentile (the fast end) while `thresholds check` compares the slow end
# (the 10th, as throughput prefers larger values), so a throughput entry fails
# on unchanged code. Throughput is 1/wall clock, which stays gated.
#
# Run from anywhere, on the machine the thresholds are for, after a deliberate
# performance change:   Benchmarks/update-thresholds.sh
set -euo pipefail
cd "$(dirname "$0")"
swift package --allow-writing-to-package-directory benchmark thresholds update --no-progress "$@"
for file in Thresholds/*.p90.json; do
    # Keys are sorted, so "throughput" is never the last one: deleting its line keeps valid JSON.
    sed -i.bak '/"throughput"/d' "$file" && rm -f "$file.bak"
done
echo "Thresholds in $(pwd)/Thresholds:"
ls Thresholds
