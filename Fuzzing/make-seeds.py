#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target into Fuzzing/Corpus/TARGET/.

The seeds are the project's own test inputs (the dates, Cache-Control lines and headers of
Tests/StashHTTPTests), the replies of a real redis-server (RESP2 and RESP3, every type that
`DEBUG PROTOCOL` sends), and records in the formats the disk and Redis tiers write. Each file
is named by the SHA-1 of its bytes, as libFuzzer names the inputs it keeps. Rerun it after a
change of format; it needs redis-server on PATH for the RESP seeds (skipped without it).
"""
import hashlib, os, socket, struct, subprocess, sys, time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Corpus")

def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)

DATES = [
    "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
    "Mon, 01 Jan 1700 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:60 GMT", "Sat, 01 Jan 0000 00:00:00 GMT",
    "Sat, 31 Dec 2016 23:59:60 GMT", "Thu, 29 Feb 2000 12:00:60 GMT", "Thu, 31 Feb 2050 02:01:18 GMT",
    "Tue, 19 Jan 2038 03:14:08 GMT", "Thu, 01 Jan 1970 00:00:00 GMT", "Sun Dec 31 23:59:60 9999",
    "Wednesday, 09-Nov-99 23:12:40 GMT", "SUN, 06 NOV 1994 08:49:37 gmt", "0", "-1",
]
CACHE_CONTROL = [
    "max-age=60", "no-store", "max-age=10, stale-while-revalidate=60", "public, max-age=60\nNo-Cache, s-maxage=\"30\"",
    "extension=\"max-age=3600, no-store\", max-age=1", "max-age =3600", "max-age= 3600", "max-age=99999999999999999999999",
    "private=\"a\\\"b\", max-age=5", "max-age=3600.5", "no-cache=\"Set-Cookie\", must-revalidate, proxy-revalidate",
    "s-maxage=0, stale-if-error=86400, must-understand, no-store", "immutable, max-age=31536000",
]

def exchange(flags, status, times, response, request=""):
    """The layout of FuzzedExchange: flags, status, three Int64 times, then the header lines."""
    head = bytes([flags, status]) + b"".join(struct.pack("<q", t) for t in times)
    return head + ("\n".join(response) + "\n\n" + "\n".join(request)).encode()

def http_seeds():
    for date in DATES:
        write("FuzzHTTPDate", date)
    for line in CACHE_CONTROL:
        write("FuzzCacheControl", line)
    write("FuzzCacheControl", "5")
    write("FuzzCacheControl", "120, 3")
    near = (10, 12, 100)  # seconds near 2026 with flag 8
    exchanges = [
        (8, 0, near, ["Cache-Control: max-age=60", "Date: Thu, 01 Jan 2026 00:00:10 GMT"], []),
        (8, 0, near, ["Cache-Control: max-age=60", "Date: Mon, 01 Jan 1700 00:00:00 GMT"], []),
        (9, 0, near, ["Cache-Control: s-maxage=30, max-age=5", "CDN-Cache-Control: max-age=100", "Age: 20"], ["Authorization: x"]),
        (8, 0, near, ["Expires: Thu, 01 Jan 2026 01:00:00 GMT", "Date: Thu, 01 Jan 2026 00:00:00 GMT"], ["Cache-Control: max-stale"]),
        (8, 0, near, ["Last-Modified: Mon, 01 Dec 2025 00:00:00 GMT", "Date: Thu, 01 Jan 2026 00:00:00 GMT", "ETag: \"a\""], ["If-None-Match: \"a\""]),
        (8, 0, near, ["Cache-Control: max-age=60", "Vary: Accept-Language, Accept-Encoding"], ["Accept-Language: en, fr", "Accept-Encoding: gzip,br"]),
        (8, 0, near, ["Cache-Control: max-age=60", "Vary: *"], []),
        (8, 0, near, ["Cache-Control: no-store, must-understand, max-age=60"], ["Cache-Control: min-fresh=10, max-age=5"]),
        (8, 13, near, ["Cache-Control: max-age=60, stale-while-revalidate=100, stale-if-error=5", "Age: 2147483648"], ["Pragma: no-cache"]),
        (0, 0, (-2**63, 2**63 - 1, 0), ["Cache-Control: max-age=2147483648", "Expires: Fri, 31 Dec 9999 23:59:59 GMT"], []),
        (8, 0, near, ["Cache-Control: max-age=60", "ETag: \"r\""], ["Range: bytes=0-1", "If-Range: \"r\""]),
        (8, 0, near, ["Cache-Control: max-age=60", "Last-Modified: Mon, 01 Dec 2025 00:00:00 GMT", "Date: Thu, 01 Jan 2026 00:00:00 GMT"],
         ["Range: bytes=-99999999999999999999", "If-Range: Mon, 01 Dec 2025 00:00:00 GMT"]),
    ]
    for flags, status, times, response, request in exchanges:
        seed = exchange(flags, status, times, response, request)
        for target in ("FuzzHTTPCacheRules", "FuzzVary", "FuzzStoredEntry"):
            write(target, seed)
    for etag in ["\"a\"\n\"a\"", "W/\"a\"\n\"b\", W/\"a\"", "\"xyz\"\n*", "\"a\"\n\"b\"\n\"c\"", "W/\n\"\""]:
        write("FuzzETag", etag)
    # Records in the SHC1 format (HTTPCacheEntry+Encoding.swift).
    def string(s):
        b = s.encode()
        return struct.pack("<I", len(b)) + b
    def record(variants):
        out = b"SHC1" + struct.pack("<I", len(variants))
        for status, reason, t1, t2, vary, fields, body in variants:
            out += struct.pack("<H", status) + string(reason) + struct.pack("<qq", t1, t2)
            out += struct.pack("<I", len(vary))
            for name, value in vary:
                out += string(name) + bytes([0 if value is None else 1]) + string(value or "")
            out += struct.pack("<I", len(fields))
            for name, value in fields:
                out += string(name) + string(value)
            out += struct.pack("<I", len(body)) + body
        return out
    write("FuzzStoredEntry", record([(200, "OK", 1, 2, [], [("Cache-Control", "max-age=60")], b"hello")]))
    write("FuzzStoredEntry", record([
        (200, "OK", 10**18, 10**18 + 5, [("accept-language", "en"), ("cookie", None)],
         [("Vary", "Accept-Language, Cookie"), ("ETag", "\"v1\"")], b""),
        (404, "Not Found", -1, 2**63 - 1, [], [], b"\x00\xff")]))

def redis_seeds():
    if subprocess.run(["sh", "-c", "command -v redis-server"], capture_output=True).returncode != 0:
        print("redis-server not found: no RESP seeds", file=sys.stderr)
        return
    server, conn, _ = start_redis("--enable-debug-command", "yes")
    try:
        def command(*args):
            return raw_command(conn, *args)
        replies = [command("PING"), command("SET", "k", "v"), command("GET", "k"), command("GET", "missing"),
                   command("MSET", "a", "1", "b", b"\x00\r\n\xff"), command("MGET", "a", "b", "missing"),
                   command("INCR", "n"), command("NOSUCHCOMMAND"), command("HSET", "h", "f", "v", "g", "w"),
                   command("HGETALL", "h"), command("SADD", "s", "x", "y"), command("SMEMBERS", "s"),
                   command("ZADD", "z", "1.5", "m"), command("ZSCORE", "z", "m"), command("LRANGE", "nolist", "0", "-1")]
        replies.append(command("HELLO", "3"))
        replies += [command("HGETALL", "h"), command("SMEMBERS", "s"), command("ZSCORE", "z", "m"), command("GET", "missing")]
        for kind in ["string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "push", "verbatim", "true", "false"]:
            replies.append(command("DEBUG", "PROTOCOL", kind))
        conn.close()
    finally:
        server.terminate()
        server.wait()
    replies = [r for r in replies if r]
    for index, reply in enumerate(replies):
        write("FuzzRESP", bytes([index]) + reply)
    write("FuzzRESP", bytes([7]) + b"".join(replies))

def start_redis(*extra):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", *extra],
                              stdout=subprocess.DEVNULL, cwd="/tmp")
    for _ in range(100):
        try:
            return server, socket.create_connection(("127.0.0.1", port), timeout=5), port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")

def raw_command(conn, *args):
    conn.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in (x.encode() if isinstance(x, str) else x for x in args)))
    time.sleep(0.1)
    conn.settimeout(0.2)
    reply = b""
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            reply += chunk
    except socket.timeout:
        pass
    return reply

def cluster_seeds():
    for text in ["MOVED 3999 127.0.0.1:6381", "ASK 3999 127.0.0.1:6381", "MOVED 0 [::1]:7000", "MOVED 16383 ::1:7000",
                 "TRYAGAIN Multiple keys request during rehashing of slot", "CLUSTERDOWN The cluster is down"]:
        write("FuzzRedisCluster", text)
    if subprocess.run(["sh", "-c", "command -v redis-server"], capture_output=True).returncode != 0:
        return
    config = "/tmp/stash-seed-nodes-%d.conf" % os.getpid()
    server, conn, port = start_redis("--cluster-enabled", "yes", "--cluster-config-file", config)
    try:
        raw_command(conn, "CLUSTER", "ADDSLOTSRANGE", "0", "5460")
        raw_command(conn, "CLUSTER", "ADDSLOTSRANGE", "10923", "16383")
        write("FuzzRedisCluster", raw_command(conn, "CLUSTER", "SLOTS"))
        write("FuzzRedisCluster", raw_command(conn, "GET", "k"))
        conn.close()
    finally:
        server.terminate()
        server.wait()
        if os.path.exists(config):
            os.remove(config)

def tier_seeds():
    for now, expiry, payload in [(1_767_225_600_000, 0, b"value"), (1_767_225_600_000, 1_767_225_660_000, b"{}"),
                                 (1_767_225_600_000, 1_000, b""), (0, -1, b"x")]:
        write("FuzzRedisValueHeader", struct.pack("<q", now) + bytes([0xC5, 1]) + struct.pack(">q", expiry) + payload)
    write("FuzzRedisValueHeader", struct.pack("<q", 5) + b"plain value")
    for key in ["k", "user:42", "caf\u00e9", "cafe\u0301", "\u1e9b\u0323", "\ufb01", "\U0001F600", "\u0000", ""]:
        write("FuzzKeyNormalisation", key)
    write("FuzzKeyNormalisation", b"\xff\xfe invalid")

def disk_seeds():
    # FuzzDiskEntry: flags, then size, modification, access and expiration times (<q each), a name
    # length byte and the name, then the payload (DiskEntryCheck.swift has the layout).
    def entry(flags, size=0, modified=1_767_225_600_000_000_000, accessed=1_767_225_600_000_000_000,
              expires=0, name=b"", payload=b""):
        return bytes([flags]) + struct.pack("<qqqq", size, modified, accessed, expires) + bytes([len(name)]) + name + payload
    write("FuzzDiskEntry", entry(0, payload=b"inline bytes"))           # an inline row, whole
    write("FuzzDiskEntry", entry(1))                                    # a file row, whole
    write("FuzzDiskEntry", entry(1 | 8, payload=b"shorter"))            # the file rewritten, row agrees
    write("FuzzDiskEntry", entry(1 | 32, size=10))                      # the row's size is wrong
    write("FuzzDiskEntry", entry(1 | 4, name=b"../manifest.sqlite"))    # a name outside data/
    write("FuzzDiskEntry", entry(0 | 2, expires=1, payload=b"old"))     # long expired
    write("FuzzDiskEntry", entry(16 | 32, size=3))                      # no inline bytes, size 3
    write("FuzzDiskEntry", entry(0, modified=-(1 << 63), accessed=(1 << 63) - 1, payload=b"t"))  # extreme times

if __name__ == "__main__":
    # make-seeds.py [http|tier|redis|cluster|disk ...]: only those groups (all by default).
    groups = {"http": http_seeds, "tier": tier_seeds, "redis": redis_seeds, "cluster": cluster_seeds, "disk": disk_seeds}
    for name in sys.argv[1:] or list(groups):
        groups[name]()
