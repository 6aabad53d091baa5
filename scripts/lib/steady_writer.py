#!/usr/bin/env python3
"""A steady, rate-limited write load for scripts/bench-forks: SETs of existing keys, sent
straight to the shard that owns each key (CRC16 slot routing), so every write dirties a page of
the owning shard without saturating the CPU the way an unthrottled load generator would.

    steady_writer.py PORT_BASE SHARDS KEYS VALUE_BYTES WRITES_PER_SECOND MAX_SECONDS
"""
import random
import socket
import sys
import time


def crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def command(*args: bytes) -> bytes:
    out = b"*%d\r\n" % len(args)
    for arg in args:
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


def slot_owners(port: int) -> list:
    """Port of the owner of every slot, from CLUSTER SLOTS parsed crudely (integers only)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(command(b"CLUSTER", b"SLOTS"))
    data = b""
    sock.settimeout(2)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            if len(chunk) < 65536:
                break
    except socket.timeout:
        pass
    owners = [0] * 16384
    lines = data.split(b"\r\n")
    i = 0
    while i < len(lines):
        # each range: *N, :first, :last, *M, $ip, ip, :port, ...
        if lines[i].startswith(b":") and i + 1 < len(lines) and lines[i + 1].startswith(b":"):
            first, last = int(lines[i][1:]), int(lines[i + 1][1:])
            j = i + 2
            while j < len(lines) and not (lines[j].startswith(b":") and j > i + 3):
                j += 1
            owner = int(lines[j][1:])
            for slot in range(first, last + 1):
                owners[slot] = owner
            i = j + 1
        else:
            i += 1
    return owners


def main() -> None:
    base, shards, keys, size, rate, limit = (int(a) for a in sys.argv[1:7])
    owners = slot_owners(base)
    sockets = {port: socket.create_connection(("127.0.0.1", port))
               for port in range(base, base + shards)}
    for sock in sockets.values():
        sock.setblocking(False)
    value = b"x" * size
    per_tick = max(1, rate // 100)
    deadline = time.time() + limit
    while time.time() < deadline:
        tick = time.time()
        batches = {}
        for _ in range(per_tick):
            key = b"key:%012d" % random.randrange(keys)  # redis-benchmark's key names
            batches.setdefault(owners[crc16(key) % 16384], []).append(command(b"SET", key, value))
        for port, batch in batches.items():
            try:
                sockets[port].sendall(b"".join(batch))
            except (BlockingIOError, KeyError):
                pass
        for sock in sockets.values():  # drain replies so the shards never block on us
            try:
                while sock.recv(1 << 20):
                    pass
            except BlockingIOError:
                pass
        time.sleep(max(0.0, 0.01 - (time.time() - tick)))


if __name__ == "__main__":
    main()
