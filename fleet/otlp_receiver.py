"""A minimal OTLP/HTTP traces receiver for the tests of `ctxj export --endpoint`
(tests/cli/otlp_receiver.rs). Not a real collector: it checks what ctxj sends the way a receiver
must read it — the body of POST /v1/traces decoded strictly as an `ExportTraceServiceRequest` by
the reference protobuf classes (opentelemetry-proto) — and writes each span as a JSON line.

    python fleet/otlp_receiver.py OUT.jsonl [--status CODE] [--seconds N]

Listens on 127.0.0.1, a free port, printed as the first line of stdout; answers 200 with an
empty `ExportTraceServiceResponse` (or CODE with a two-line text body, to test errors); stops
after N seconds (default 120) or when killed. A body that does not parse, a wrong path or a
content type other than application/x-protobuf gets 400 and is recorded as an error line.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def spans(req):
    for rs in req.resource_spans:
        resource = {kv.key: value(kv.value) for kv in rs.resource.attributes}
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield {
                    "trace_id": s.trace_id.hex(),
                    "trace_id_bytes": len(s.trace_id),
                    "span_id": s.span_id.hex(),
                    "span_id_bytes": len(s.span_id),
                    "parent_span_id": s.parent_span_id.hex(),
                    "name": s.name,
                    "kind": s.kind,
                    "start": s.start_time_unix_nano,
                    "end": s.end_time_unix_nano,
                    "scope": ss.scope.name,
                    "resource": resource,
                    "attributes": {kv.key: value(kv.value) for kv in s.attributes},
                }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--status", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=120)
    a = ap.parse_args()
    out = open(a.out, "a", encoding="utf-8")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, code, body, kind):
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            kind = self.headers.get("Content-Type", "")
            with lock:
                if self.path != "/v1/traces" or kind != "application/x-protobuf":
                    out.write(json.dumps({"error": f"{self.path} {kind}"}) + "\n")
                    out.flush()
                    return self.reply(400, b"bad path or content type\n", "text/plain")
                try:
                    req = ExportTraceServiceRequest()
                    req.ParseFromString(body)
                except Exception as e:  # noqa: BLE001 - any decode failure is the sender's
                    out.write(json.dumps({"error": f"decode: {e}"}) + "\n")
                    out.flush()
                    return self.reply(400, b"undecodable\n", "text/plain")
                out.write(json.dumps({"request": len(body), "headers": dict(self.headers)}) + "\n")
                for s in spans(req):
                    out.write(json.dumps(s) + "\n")
                out.flush()
            if a.status != 200:
                return self.reply(a.status, b"\x1b[31mquota exceeded\nsecond line\n", "text/plain")
            self.reply(200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")

    server = HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Timer(a.seconds, server.shutdown).start()
    server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
