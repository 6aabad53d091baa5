"""Free loopback port ranges for the scripts that start shards (chaos.py, redis_test_suite.py)."""

import socket


def port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_base_port(count, low, high, step):
    """A base port in [low, high - count) with base..base+count-1 and their cluster bus ports
    (+10000) free on 127.0.0.1, or None."""
    for base in range(low, high - count, step):
        ports = list(range(base, base + count)) + list(range(base + 10000, base + 10000 + count))
        if all(port_free(port) for port in ports):
            return base
    return None
