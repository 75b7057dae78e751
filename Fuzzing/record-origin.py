#!/usr/bin/env python3
"""Seeds from real traffic: the HTTP exchanges of the cache-tests suite's origin.

Starts the suite's origin server (../shared/http-conformance, read by path, as
scripts/http-conformance/run.sh does) behind a recording reverse proxy on 127.0.0.1, runs the
suite's client against the recorder (no cache in between: every request reaches the origin),
and writes each distinct exchange, the origin's status and header lines with the request's
header lines, as a seed of FuzzHTTPCacheRules (and of FuzzVary when the response varies), in
the layout of FuzzedExchange (Tests/StashHTTPTests/FuzzChecks/FuzzedExchange.swift). "Distinct"
is the status with the sets of response and request field names, so a few dozen seeds cover
the suite's thousands of requests; each file is named by the SHA-1 of its bytes.

    Fuzzing/record-origin.py            # needs node; writes into Fuzzing/Corpus/
    Fuzzing/record-origin.py --dry-run  # only counts what it would write

Every server listens on 127.0.0.1 on a free port and is stopped on exit.
"""
import hashlib, http.client, http.server, json, os, socket, struct, subprocess, sys, threading

ROOT = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(ROOT, "..", "..", "shared", "http-conformance")
LOOPBACK = os.path.join(ROOT, "..", "scripts", "http-conformance", "loopback.mjs")
CORPUS = os.path.join(ROOT, "Corpus")
# FuzzedExchange.statuses and its methods, in order.
STATUSES = [200, 203, 204, 206, 300, 301, 302, 303, 304, 307, 308, 404, 405, 410, 414, 500, 501, 503, 599, 100]
METHODS = ["GET", "HEAD", "POST", "OPTIONS"]
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
MAX_SEEDS = 60

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def wait_for(port, process):
    for _ in range(300):
        if process.poll() is not None:
            sys.exit(f"record-origin: a server exited early ({process.args})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            threading.Event().wait(0.1)
    sys.exit("record-origin: a server did not start")

class Recorder(http.server.BaseHTTPRequestHandler):
    """Forwards each request to the origin as it came, records both heads, answers as the origin did."""
    origin_port = 0
    exchanges = []
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def __getattr__(self, name):
        if name.startswith("do_"):
            return self.forward
        raise AttributeError(name)

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        request_fields = [(k, v) for k, v in self.headers.items()]
        connection = http.client.HTTPConnection("127.0.0.1", self.origin_port, timeout=30)
        try:
            connection.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for name, value in request_fields:
                if name.lower() not in HOP_BY_HOP:
                    connection.putheader(name, value)
            connection.endheaders(body)
            response = connection.getresponse()
            payload = response.read()
            response_fields = response.getheaders()
            with self.lock:
                self.exchanges.append((self.command, response.status, response_fields, request_fields))
            self.send_response_only(response.status, response.reason)
            for name, value in response_fields:
                if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                    self.send_header(name, value)
            if self.command != "HEAD" and response.status not in (204, 304):
                self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
        except OSError:
            self.send_error(502)
        finally:
            connection.close()

    def log_message(self, *args):
        pass

def seed(method, status, response_fields, request_fields):
    """The FuzzedExchange layout: flags (shared mode, the method, times near 2026), the status
    index, three Int64 times, the response's header lines, an empty line, the request's."""
    flags = 1 | (METHODS.index(method) << 1) | 8
    head = bytes([flags, STATUSES.index(status)]) + b"".join(struct.pack("<q", t) for t in (10, 12, 100))
    lines = lambda fields: "\n".join(f"{k}: {v}" for k, v in fields if k.lower() not in HOP_BY_HOP)
    return head + (lines(response_fields) + "\n\n" + lines(request_fields)).encode("utf-8", "replace")

def main():
    dry_run = "--dry-run" in sys.argv
    if not os.path.exists(os.path.join(SUITE, "cache-tests", "test-engine", "cli.mjs")):
        sys.exit(f"record-origin: the suite is not at {SUITE}")
    origin_port, recorder_port = free_port(), free_port()
    pidfile = os.path.join("/tmp", f"record-origin-{os.getpid()}.pid")
    env = dict(os.environ, npm_config_port=str(origin_port), npm_config_protocol="http", npm_config_pidfile=pidfile)
    origin = subprocess.Popen(
        ["node", "--import", LOOPBACK, os.path.join(SUITE, "cache-tests", "test-engine", "server", "server.mjs")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = None
    try:
        wait_for(origin_port, origin)
        Recorder.origin_port = origin_port
        server = http.server.ThreadingHTTPServer(("127.0.0.1", recorder_port), Recorder)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        client_env = dict(os.environ, npm_config_base=f"http://127.0.0.1:{recorder_port}", npm_config_id="", npm_package_config_id="")
        subprocess.run(["node", "--no-warnings", os.path.join(SUITE, "cache-tests", "test-engine", "cli.mjs")],
                       env=client_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1200)
    finally:
        if server:
            server.shutdown()
        origin.terminate()
        origin.wait()
        if os.path.exists(pidfile):
            os.remove(pidfile)
    seen, written = set(), 0
    for method, status, response_fields, request_fields in Recorder.exchanges:
        if method not in METHODS or status not in STATUSES:
            continue
        shape = (method, status, frozenset(k.lower() for k, _ in response_fields), frozenset(k.lower() for k, _ in request_fields))
        if shape in seen or written >= MAX_SEEDS:
            continue
        seen.add(shape)
        data = seed(method, status, response_fields, request_fields)
        targets = ["FuzzHTTPCacheRules"] + (["FuzzVary"] if any(k.lower() == "vary" for k, _ in response_fields) else [])
        for target in targets:
            if not dry_run:
                folder = os.path.join(CORPUS, target)
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
                    f.write(data)
        written += 1
    print(f"record-origin: {len(Recorder.exchanges)} exchanges recorded, {written} distinct written as seeds")

if __name__ == "__main__":
    main()
