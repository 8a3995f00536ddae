#!/usr/bin/python3
"""Submit one job to an hlox broker and print its result, using only Debian's python3-zmq and
python3-msgpack. The wire protocol is in docs/PROTOCOL.md: every message is two frames, a
4-byte header b"HX" + version + command byte, and a msgpack map body.

usage: submit_job.py tcp://127.0.0.1:5555 [module.hlo]
"""
import sys
import uuid

import msgpack
import zmq

VERSION = 1
MODULE = """HloModule add

ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT c = f32[4] add(a, b)
}
"""


def header(cmd):
    return b"HX" + bytes([VERSION]) + cmd


def main():
    address = sys.argv[1] if len(sys.argv) > 1 else "tcp://127.0.0.1:5555"
    text = open(sys.argv[2]).read() if len(sys.argv) > 2 else MODULE
    job_id = "py-" + uuid.uuid4().hex
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(address)
    submit = {
        "id": job_id,
        "campaign": "python-example",
        "module_hash": "",        # "" with the module text: the broker computes the hash
        "module": text,
        "pipeline": "default",
        "decisions": {},          # invocation key -> bytes of little-endian int32 choices
        "cache": False,
    }
    sock.send_multipart([header(b"S"), msgpack.packb(submit, use_bin_type=True)])
    poller = zmq.Poller()
    poller.register(sock, zmq.POLLIN)
    while True:
        if not poller.poll(30000):
            print("no reply from the broker", file=sys.stderr)
            return 2
        frames = sock.recv_multipart()
        cmd = frames[0][3:4]
        body = msgpack.unpackb(frames[1], raw=False) if len(frames) > 1 and frames[1] else {}
        if cmd == b"R" and body["id"] == job_id:
            record = msgpack.unpackb(body["record"], raw=False)
            print("job", job_id, "status", record["status"], "median_s", record["cost"]["median"],
                  "worker", record["provenance"]["worker_id"])
            return 0 if record["status"] == "OK" else 1
        if cmd == b"E":
            print("broker error:", body["code"], body["message"], file=sys.stderr)
            return 1
        # heartbeats and anything else: keep waiting


if __name__ == "__main__":
    sys.exit(main())
