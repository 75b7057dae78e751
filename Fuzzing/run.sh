#!/usr/bin/env bash
# Fuzzing/run.sh TARGET SECONDS [libFuzzer options...]
#
# Runs one libFuzzer campaign of TARGET (FuzzHTTPDate, FuzzRESP, ...: `Fuzzing/run.sh --list`)
# for SECONDS, building the targets first if needed. The campaign starts from the committed seeds
# (Fuzzing/Corpus/TARGET) and grows a working corpus in .build-fuzz/corpus/TARGET (not
# committed; `--merge` below folds what it found back into the seeds). Any input that crashes,
# leaks, times out or runs out of memory is copied to Fuzzing/FailCases/TARGET/, and the script
# then exits non-zero. The last line of libFuzzer's output (executions, coverage, exec/s) is
# printed at the end; the whole log is in .build-fuzz/logs/TARGET.log.
#
#   Fuzzing/run.sh FuzzRESP 1800                # a 30-minute campaign
#   Fuzzing/run.sh FuzzRESP 60 -jobs=1 -dict=x   # extra options go to libFuzzer
#   Fuzzing/run.sh --merge FuzzRESP              # minimise the working corpus into the seeds
#   Fuzzing/run.sh --build                       # only build
#
# A campaign uses one core.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build-fuzz
targets=(FuzzHTTPDate FuzzCacheControl FuzzHTTPCacheRules FuzzVary FuzzETag FuzzStoredEntry FuzzKeyNormalisation FuzzDiskEntry FuzzRESP FuzzRedisValueHeader FuzzRedisCluster)

build() {
    # -sanitize=fuzzer,address instruments every Swift module (Stash's too, for coverage);
    # -enable-testing lets the checks reach Stash's internal parsers by @testable import.
    # Release: 4 to 5 times the executions per second of a debug build (docs/development.md).
    # Fuzzing/Package.swift asks the root package for its Redis trait only: no AsyncHTTPClient.
    swift build -c release --package-path Fuzzing --scratch-path "$scratch" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing 2>&1 \
        | grep -v "Cannot export local symbol" >&2
}

case "${1:-}" in
    --list) printf '%s\n' "${targets[@]}"; exit 0 ;;
    --build) build; exit 0 ;;
    --merge)
        target=${2:?usage: run.sh --merge TARGET}
            mkdir -p "Fuzzing/Corpus/$target.new"
        "$scratch/release/$target" -merge=1 "Fuzzing/Corpus/$target.new" "Fuzzing/Corpus/$target" "$scratch/corpus/$target"
        rm -rf "Fuzzing/Corpus/$target" && mv "Fuzzing/Corpus/$target.new" "Fuzzing/Corpus/$target"
        exit 0 ;;
    ""|-h|--help) sed -n '2,20p' "$0"; exit 2 ;;
esac

target=$1
seconds=${2:?usage: run.sh TARGET SECONDS [libFuzzer options...]}
shift 2
# Not `printf | grep -q`: under pipefail, grep -q exiting at the first match can fail printf with
# SIGPIPE, and a real target was then reported as unknown (CI, FuzzETag).
known=false
for candidate in "${targets[@]}"; do [ "$candidate" = "$target" ] && known=true; done
$known || { echo "run.sh: no target $target (run.sh --list)" >&2; exit 2; }

build
corpus="$scratch/corpus/$target"
artifacts="$scratch/artifacts/$target/"
mkdir -p "$corpus" "$artifacts" "$scratch/logs" "Fuzzing/Corpus/$target"
log="$scratch/logs/$target.log"
status=0
# Swift's backtracer would start after a property's fatalError and trip the address sanitizer;
# libFuzzer and ASan print the stack themselves.
export SWIFT_BACKTRACE=enable=no
# -timeout: an input that takes 10 s is a hang; -rss_limit_mb: 2 GiB is far over what any parser
# needs; leaks are reported by the address sanitizer (detect_leaks is on by default).
"$scratch/release/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$artifacts" "$@" "$corpus" "Fuzzing/Corpus/$target" >"$log" 2>&1 || status=$?

found=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null || true)
if [ -n "$found" ]; then
    mkdir -p "Fuzzing/FailCases/$target"
    for file in $found; do cp "$file" "Fuzzing/FailCases/$target/"; done
    echo "run.sh: $target failed; the input is in Fuzzing/FailCases/$target/, the log in $log" >&2
    grep -E "SUMMARY|ERROR|Fatal error|property violated" "$log" | head -5 >&2
    exit 1
fi
grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || tail -3 "$log"
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" | sort -u || true
exit "$status"
