#!/usr/bin/env bash
# Loopback load test of stash-proxy beside nginx's proxy_cache and Varnish, in one run, against
# one origin (nginx serving static files). wrk drives each; every scenario is measured on the
# three caches in turn, RUNS times, and the medians are printed as a Markdown table.
#
#   scripts/http-bench/run.sh [--runs N] [--duration SECONDS] [--connections N] [--no-build]
#
# Scenarios: a fresh 1 KB hit, a fresh 1 MB hit, a miss (a new URL per request, 1 KB, stored),
# and a revalidation (max-age=0 with an ETag: every request goes to the origin, which answers 304).
# Servers listen on 127.0.0.1 on free ports and are stopped on exit. Needs wrk, nginx, varnishd.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/http-bench"
runs=3
duration=10
connections=32
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift ;;
        --duration) duration="$2"; shift ;;
        --connections) connections="$2"; shift ;;
        --no-build) build=0 ;;
        *) echo "usage: $0 [--runs N] [--duration SECONDS] [--connections N] [--no-build]" >&2; exit 2 ;;
    esac
    shift
done
for tool in wrk nginx varnishd python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "http-bench: $tool is missing (Debian: wrk, nginx-light, varnish)" >&2; exit 2; }
done

if [ "$build" = 1 ]; then (cd "$root" && swift build -c release --scratch-path .build-release --product stash-proxy); fi
proxy_bin="$(cd "$root" && swift build -c release --scratch-path .build-release --show-bin-path)/stash-proxy"

dir="$root/.build-bench/http"
rm -rf "$dir" && mkdir -p "$dir/www/fresh" "$dir/www/revalidate" "$dir/stash-cache"
head -c 1024 /dev/urandom > "$dir/www/fresh/1k"
head -c 1048576 /dev/urandom > "$dir/www/fresh/1m"
cp "$dir/www/fresh/1k" "$dir/www/revalidate/1k"

pids=()
stop_all() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
wait_for_port() {
    local i
    for i in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "http-bench: nothing listens on 127.0.0.1:$1" >&2
    return 1
}
render() { # template output
    sed -e "s|@DIR@|$dir|g" -e "s|@ROOT@|$dir/www|g" -e "s|@ORIGIN_PORT@|$origin_port|g" \
        -e "s|@NGINX_PORT@|$nginx_port|g" "$1" > "$2"
}

origin_port="$(free_port)"; nginx_port="$(free_port)"; varnish_port="$(free_port)"; stash_port="$(free_port)"
render "$here/origin.nginx.conf" "$dir/origin.conf"
render "$here/nginx.conf" "$dir/nginx.conf"
render "$here/varnish.vcl" "$dir/varnish.vcl"

nginx -p "$dir" -c "$dir/origin.conf" -g 'daemon off;' &
pids+=($!)
nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' &
pids+=($!)
varnishd -F -a "127.0.0.1:$varnish_port" -T none -f "$dir/varnish.vcl" -s malloc,1g -n "$dir/varnish" \
    >"$dir/varnish.log" 2>&1 &
pids+=($!)
"$proxy_bin" --listen "127.0.0.1:$stash_port" --origin "http://127.0.0.1:$origin_port" \
    --directory "$dir/stash-cache" >"$dir/stash-proxy.log" 2>&1 &
pids+=($!)
for port in "$origin_port" "$nginx_port" "$varnish_port" "$stash_port"; do wait_for_port "$port"; done

declare -A ports=([stash-proxy]="$stash_port" [nginx]="$nginx_port" [varnish]="$varnish_port")
caches=(stash-proxy nginx varnish)
scenarios=(hit-1k hit-1m miss-1k revalidate-1k)
path_of() {
    case "$1" in
        hit-1k) echo /fresh/1k ;;
        hit-1m) echo /fresh/1m ;;
        miss-1k) echo "/fresh/1k?run=$2" ;;
        revalidate-1k) echo /revalidate/1k ;;
    esac
}

# Warm every cache: two requests per URL, so even a cache that stores on the second sight holds it.
for cache in "${caches[@]}"; do
    for scenario in hit-1k hit-1m revalidate-1k; do
        for _ in 1 2; do
            curl -s -o /dev/null "http://127.0.0.1:${ports[$cache]}$(path_of "$scenario")"
        done
    done
done

results="$dir/results.tsv"
: > "$results"
for run in $(seq 1 "$runs"); do
    for scenario in "${scenarios[@]}"; do
        for cache in "${caches[@]}"; do
            url="http://127.0.0.1:${ports[$cache]}$(path_of "$scenario" "$run-$cache")"
            script=()
            [ "$scenario" = miss-1k ] && script=(-s "$here/miss.lua")
            out="$(wrk -t2 -c"$connections" -d"${duration}s" --latency "${script[@]}" "$url")"
            echo "$out" > "$dir/wrk-$scenario-$cache-$run.txt"
            rps="$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")"
            p50="$(awk '$1 == "50%" { print $2 }' <<<"$out")"
            p99="$(awk '$1 == "99%" { print $2 }' <<<"$out")"
            errors="$(awk '/Non-2xx or 3xx responses:/ { print $5 } /Socket errors:/ { print "socket-errors" }' <<<"$out" | tr '\n' ' ')"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scenario" "$cache" "$run" "$rps" "$p50" "$p99" "${errors:-0}" >> "$results"
            echo "run $run $scenario $cache: $rps req/s, p50 $p50, p99 $p99 ${errors}"
        done
    done
done

python3 - "$results" "$runs" "$duration" "$connections" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
def ms(text):
    units = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
    for unit in ("us", "ms", "s"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float("nan")
med = {}
for scenario, cache, run, rps, p50, p99, errors in rows:
    med.setdefault((scenario, cache), []).append((float(rps), ms(p50), ms(p99)))
print(f"\nmedians of {sys.argv[2]} runs, wrk -t2 -c{sys.argv[4]} -d{sys.argv[3]}s on loopback\n")
print("| scenario | cache | requests/s | p50 ms | p99 ms | ÷ nginx (req/s) |")
print("|---|---|---:|---:|---:|---:|")
for scenario in ("hit-1k", "hit-1m", "miss-1k", "revalidate-1k"):
    base = statistics.median(r[0] for r in med[(scenario, "nginx")])
    for cache in ("stash-proxy", "nginx", "varnish"):
        values = med[(scenario, cache)]
        rps = statistics.median(v[0] for v in values)
        p50 = statistics.median(v[1] for v in values)
        p99 = statistics.median(v[2] for v in values)
        print(f"| {scenario} | {cache} | {rps:,.0f} | {p50:.2f} | {p99:.2f} | {rps / base:.2f}× |")
PY
