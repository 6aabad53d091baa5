#!/usr/bin/env python3
"""Writes to every primary of a cluster in turn, one write in flight, and reports the longest gap
between two acknowledged writes: what a client felt of a pause (scripts/bench-backup measures
`shardctl backup`'s write pause this way, from outside).

    gap_writer.py PORT_BASE SHARDS STOP_FILE MAX_SECONDS

Key i goes to primary i % SHARDS (a key whose CRC16 slot that primary owns), so a pause of any
primary stalls the loop. Prints one JSON line: writes, seconds, max_gap_ms, p99_gap_ms, errors.
"""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from steady_writer import command, crc16, slot_owners  # noqa: E402


def key_for(port: int, owners: list, start: int) -> bytes:
    """A key whose slot `port` owns."""
    n = start
    while True:
        key = b"gap:%d" % n
        if owners[crc16(key) % 16384] == port:
            return key
        n += 1


def main() -> None:
    base, shards, stop_file, limit = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    owners = slot_owners(base)
    ports = list(range(base, base + shards))
    keys = {port: key_for(port, owners, port * 100000) for port in ports}
    sockets = {port: socket.create_connection(("127.0.0.1", port)) for port in ports}
    gaps, errors, writes = [], 0, 0
    last = time.monotonic()
    deadline = last + limit
    while time.monotonic() < deadline and not os.path.exists(stop_file):
        port = ports[writes % shards]
        sock = sockets[port]
        sock.sendall(command(b"SET", keys[port], b"%d" % writes))
        reply = b""
        while not reply.endswith(b"\r\n"):
            reply += sock.recv(64)
        if not reply.startswith(b"+OK"):
            errors += 1
        now = time.monotonic()
        gaps.append(now - last)
        last = now
        writes += 1
    gaps.sort()
    print(json.dumps({
        "writes": writes,
        "max_gap_ms": round(gaps[-1] * 1000, 2) if gaps else 0,
        "p99_gap_ms": round(gaps[int(len(gaps) * 0.99)] * 1000, 3) if gaps else 0,
        "errors": errors,
    }))


if __name__ == "__main__":
    main()
