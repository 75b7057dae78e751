#!/usr/bin/env bash
# Runs the cache-tests conformance suite (../shared/http-conformance, read by path, never copied)
# against stash-proxy and checks the scores against the floors in floors.txt.
#
#   scripts/http-conformance/run.sh [shared|private|urlsession|urlsession-urlcache|hummingbird|hummingbird-responder|both|all] [-c debug|release] [--no-build] [--no-check] [--keep DIR]
#
#   shared               stash-proxy in shared mode, scored as a shared cache (365 tests)
#   private              stash-proxy --private: the AsyncHTTPClient adapter in private mode, scored with --browser
#   urlsession           stash-proxy --private --client urlsession: CachingURLSession, scored with --browser
#   urlsession-urlcache  stash-proxy --client urlsession-urlcache: plain URLSession and URLCache (no Stash
#                        cache), scored with --browser; reported, no floor
#   hummingbird          stash-hummingbird-proxy: a Hummingbird app of HTTPCacheMiddleware (shared mode) and
#                        one forwarding route, scored as a shared cache
#   hummingbird-responder  the same app with HTTPCacheResponder instead of the middleware
#   both                 shared, then private
#   all                  (default) the six, one after the other, each against a fresh origin and proxy
#
# -c picks the build configuration of stash-proxy: debug by default (CI has built it already, and
# the suite's pace is set by its own pauses, not by the proxy's speed).
# Every server it starts listens on 127.0.0.1 on a free port and is stopped on exit, failure or not.
# Results and logs go to .build-conformance/ (git-ignored). Exit status: 0 when every run meets its
# floor, 1 when one does not, 2 on a setup error. When the suite is not at ../shared, it says so and
# exits 0 (a clone without the shared folder cannot run it).
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/http-conformance"
suite="$root/../shared/http-conformance"
out="$root/.build-conformance"
mode="all"
build=1
check=1
configuration=debug
while [ $# -gt 0 ]; do
    case "$1" in
        shared|private|urlsession|urlsession-urlcache|hummingbird|hummingbird-responder|both|all) mode="$1" ;;
        -c) configuration="$2"; shift ;;
        --no-build) build=0 ;;
        --no-check) check=0 ;;
        --keep) out="$2"; shift ;;
        *) echo "usage: $0 [shared|private|urlsession|urlsession-urlcache|hummingbird|hummingbird-responder|both|all] [-c debug|release] [--no-build] [--no-check] [--keep DIR]" >&2; exit 2 ;;
    esac
    shift
done

if [ ! -f "$suite/score.mjs" ] || [ ! -f "$suite/cache-tests/test-engine/cli.mjs" ]; then
    echo "http-conformance: $suite not found; skipping the conformance runs"
    exit 0
fi
command -v node >/dev/null 2>&1 || { echo "http-conformance: node is not installed (Debian: nodejs)" >&2; exit 2; }

mkdir -p "$out"
if [ "$build" = 1 ]; then
    (cd "$root" && swift build -c "$configuration" --enable-all-traits --product stash-proxy && swift build -c "$configuration" --enable-all-traits --product stash-hummingbird-proxy)
fi
bin_path="$(cd "$root" && swift build -c "$configuration" --enable-all-traits --show-bin-path)"
proxy_bin="$bin_path/stash-proxy"
hummingbird_bin="$bin_path/stash-hummingbird-proxy"
[ -x "$proxy_bin" ] || { echo "http-conformance: $proxy_bin not built" >&2; exit 2; }

pids=()
stop_all() {
    local pid
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    pids=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

free_port() {
    node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# Waits until something accepts connections on 127.0.0.1:$1 (at most 30 s), or its process $2 is gone.
wait_for_port() {
    local port="$1" pid="$2" i
    for i in $(seq 1 300); do
        if ! kill -0 "$pid" 2>/dev/null; then return 1; fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    return 1
}

floor() { awk -v k="$1" '$1 == k { print $2 }' "$here/floors.txt"; }

status=0
# run NAME PROXY-FLAGS...; SCORE-FLAGS come from the name.
run_one() {
    local name="$1"; shift
    local origin_port proxy_port cache_dir score_flags=()
    local bin="$proxy_bin"
    case "$name" in
        shared) ;;
        hummingbird|hummingbird-responder) bin="$hummingbird_bin" ;;
        *) score_flags=(--browser) ;;
    esac
    [ -x "$bin" ] || { echo "http-conformance: $bin not built" >&2; exit 2; }
    origin_port="$(free_port)"
    proxy_port="$(free_port)"
    while [ "$proxy_port" = "$origin_port" ]; do proxy_port="$(free_port)"; done
    cache_dir="$out/$name-cache"
    rm -rf "$cache_dir" && mkdir -p "$cache_dir"

    npm_config_port="$origin_port" npm_config_protocol=http npm_config_pidfile="$out/$name-origin.pid" \
        node --import "$here/loopback.mjs" "$suite/cache-tests/test-engine/server/server.mjs" \
        >"$out/$name-origin.log" 2>&1 &
    pids+=($!)
    wait_for_port "$origin_port" "$!" || { echo "http-conformance: the origin did not start ($out/$name-origin.log)" >&2; exit 2; }

    "$bin" --listen "127.0.0.1:$proxy_port" --origin "http://127.0.0.1:$origin_port" \
        --directory "$cache_dir" "$@" >"$out/$name-proxy.log" 2>&1 &
    pids+=($!)
    wait_for_port "$proxy_port" "$!" || { echo "http-conformance: stash-proxy did not start ($out/$name-proxy.log)" >&2; exit 2; }

    echo "=== cache-tests, $name mode: $(basename "$bin") $* on 127.0.0.1:$proxy_port, origin on 127.0.0.1:$origin_port"
    npm_config_base="http://127.0.0.1:$proxy_port" npm_config_id= npm_package_config_id= \
        node --no-warnings "$suite/cache-tests/test-engine/cli.mjs" >"$out/$name-results.json" 2>"$out/$name-client.log"
    stop_all

    node "$suite/score.mjs" "$out/$name-results.json" "${score_flags[@]}" | tee "$out/$name-score.txt"
    node "$suite/score.mjs" "$out/$name-results.json" "${score_flags[@]}" --json >"$out/$name-score.json"
    local pass fail min_pass max_fail
    pass="$(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).pass)" "$out/$name-score.json")"
    fail="$(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).fail)" "$out/$name-score.json")"
    min_pass="$(floor "$name.pass")"
    max_fail="$(floor "$name.required_fail_max")"
    echo "$name mode: $pass passed (floor ${min_pass:-none}), $fail required failed (allowed ${max_fail:-any})"
    if [ "$check" = 1 ]; then
        if [ -n "$min_pass" ] && [ "$pass" -lt "$min_pass" ]; then
            echo "http-conformance: $name mode passes $pass tests, under the floor of $min_pass" >&2
            status=1
        fi
        if [ -n "$max_fail" ] && [ "$fail" -gt "$max_fail" ]; then
            echo "http-conformance: $name mode fails $fail required tests, over the $max_fail allowed" >&2
            status=1
        fi
    fi
}

case "$mode" in
    shared) run_one shared ;;
    private) run_one private --private ;;
    urlsession) run_one urlsession --private --client urlsession ;;
    urlsession-urlcache) run_one urlsession-urlcache --private --client urlsession-urlcache ;;
    hummingbird) run_one hummingbird ;;
    hummingbird-responder) run_one hummingbird-responder --responder ;;
    both) run_one shared; run_one private --private ;;
    all)
        run_one shared
        run_one private --private
        run_one urlsession --private --client urlsession
        run_one urlsession-urlcache --private --client urlsession-urlcache
        run_one hummingbird
        run_one hummingbird-responder --responder
        ;;
esac
exit "$status"
