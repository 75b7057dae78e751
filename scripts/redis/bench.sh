#!/usr/bin/env bash
# StashRedis beside redis-benchmark, on the same redis-server, in the same run:
# GET and SET of 100-byte values at 50 concurrent clients, pipelining off and 16,
# interleaved ROUNDS times (default 5); prints the medians and the ratios, then
# the invalidation latency from one tier instance to another (p50, p99), the same through two
# Caches (until the reader stops serving the old value, with the writer's own call beside it), a
# frozen server (SIGSTOP, then SIGCONT: the longest call, and how soon calls reach it again), and a
# Cache read that hits its memory tier beside a plain MemoryCache hit.
# The tier's SET carries the value's time to live (`PX`), which costs the server
# more than redis-benchmark's plain SET; redis-benchmark's rate for `SET … PX` is
# printed under the table for reference (the ratios stay against the plain SET).
# The server is started here on 127.0.0.1 and a free port, and always stopped.
#
#   bash scripts/redis/bench.sh [ROUNDS] [REQUESTS]
#   (prints the load average at start and end: the machine is shared)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-5}
REQUESTS=${2:-200000}
CLIENTS=50

# STASH_REDIS_BENCH names an already built binary (skips the build).
if [ -n "${STASH_REDIS_BENCH:-}" ]; then
    BENCH=$STASH_REDIS_BENCH
else
    swift build -c release --enable-all-traits --product stash-redis-bench >/dev/null
    BENCH=$(swift build -c release --enable-all-traits --show-bin-path)/stash-redis-bench
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
DIR=$(mktemp -d)
redis-server --bind 127.0.0.1 --port "$PORT" --save '' --appendonly no --dir "$DIR" --daemonize no --logfile "$DIR/log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$DIR"' EXIT
until redis-cli -p "$PORT" PING >/dev/null 2>&1; do sleep 0.05; done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A RESULTS
for round in $(seq "$ROUNDS"); do
    for pipeline in 1 16; do
        for mode in get set; do
            cmd=$(echo "$mode" | tr a-z A-Z)
            rb=$(redis-benchmark -h 127.0.0.1 -p "$PORT" -c "$CLIENTS" -n "$REQUESTS" -d 100 -P "$pipeline" -t "$mode" -r 10000 --csv \
                | awk -F, -v c="\"$cmd\"" '$1==c {gsub(/"/,"",$2); print int($2)}')
            RESULTS["rb-$mode-$pipeline"]+="$rb "
            if [ "$mode" = set ]; then
                rbpx=$(redis-benchmark -h 127.0.0.1 -p "$PORT" -c "$CLIENTS" -n "$REQUESTS" -P "$pipeline" -r 10000 --csv \
                    SET 'key:__rand_int__' "$(head -c 100 /dev/zero | tr '\0' a)" PX 3600000 | tail -1 | awk -F, '{gsub(/"/,"",$2); print int($2)}')
                RESULTS["rbpx-$pipeline"]+="$rbpx "
            fi
            for layer in client tier; do
                ours=$("$BENCH" throughput "$PORT" "$mode" "$layer" "$CLIENTS" "$pipeline" "$REQUESTS" | sed 's/rps=//')
                RESULTS["$layer-$mode-$pipeline"]+="$ours "
            done
        done
    done
done

printf '| operation | pipelining | redis-benchmark (req/s) | StashRedis client (req/s) | ratio | RedisCacheTier (req/s) | ratio |\n'
printf '|---|---|---|---|---|---|---|\n'
for pipeline in 1 16; do
    for mode in get set; do
        rb=$(echo ${RESULTS["rb-$mode-$pipeline"]} | tr ' ' '\n' | median)
        cl=$(echo ${RESULTS["client-$mode-$pipeline"]} | tr ' ' '\n' | median)
        ti=$(echo ${RESULTS["tier-$mode-$pipeline"]} | tr ' ' '\n' | median)
        printf '| %s | %s | %s | %s | %.2f× | %s | %.2f× |\n' "$(echo $mode | tr a-z A-Z)" "$pipeline" "$rb" "$cl" \
            "$(echo "$cl / $rb" | bc -l)" "$ti" "$(echo "$ti / $rb" | bc -l)"
    done
done
for pipeline in 1 16; do
    echo "redis-benchmark SET with PX (as the tier sends it), pipelining $pipeline: $(echo ${RESULTS["rbpx-$pipeline"]} | tr ' ' '\n' | median) req/s"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "invalidation latency, one instance to another (2000 samples, loopback):"
"$BENCH" invalidation "$PORT" 2000
echo "invalidation through Cache (memory + disk + Redis), writer's setValue to the reader no longer serving the old value (1000 samples):"
"$BENCH" cache-invalidation "$PORT" 1000
echo "Redis frozen (SIGSTOP) for 3 s under reads, then resumed: the longest call, and when calls reach Redis again:"
"$BENCH" hung "$PORT" "$SERVER" 3000 3
echo
echo "a Cache (memory + Redis) read that hits memory, beside a MemoryCache hit (ns per hit, medians of 15 interleaved rounds):"
"$BENCH" memory-hit "$PORT" 15
echo
echo "1,000 keys stored through a Cache (memory + disk + Redis): setValue per key, setValues, a bulk load (µs per key, medians of 7 interleaved rounds):"
"$BENCH" cache-batch "$PORT" 1000 7
