#!/usr/bin/env python3
"""Times GET requests to `tributary console` (bench/console): one keep-alive connection, each route
asked WARMUP times untimed, then N times timed, one after the other. Prints one line per route:

    route=/api/overview n=30 p50_ms=12.3 p95_ms=14.0 max_ms=15.2 bytes=1234 status=200

Usage: console_timing.py BASE_URL N WARMUP ROUTE...   (BASE_URL: http://127.0.0.1:PORT)
Standard library only (http.client), so that the client adds as little as it can to the times.
"""
import http.client
import sys
import time
import urllib.parse


def percentile(sorted_values, p):
    """The nearest-rank percentile of an ascending list."""
    rank = max(1, int(-(-p * len(sorted_values) // 100)))
    return sorted_values[rank - 1]


def ask(conn, route):
    conn.request("GET", route, headers={"Accept": "application/json"})
    response = conn.getresponse()
    body = response.read()
    return response.status, len(body)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    base, n, warmup, routes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    for route in routes:
        for _ in range(warmup):
            ask(conn, route)
        times = []
        status = size = None
        for _ in range(n):
            t0 = time.perf_counter()
            status, size = ask(conn, route)
            times.append((time.perf_counter() - t0) * 1000.0)
        times.sort()
        print(f"route={route} n={n} p50_ms={percentile(times, 50):.1f} p95_ms={percentile(times, 95):.1f} "
              f"max_ms={times[-1]:.1f} bytes={size} status={status}", flush=True)


if __name__ == "__main__":
    main()
