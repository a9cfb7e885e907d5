#!/usr/bin/python3
"""The consumers of bench/consume's lanes scenario: K consumers of one group share its work.

    /usr/bin/python3 bench/consume_lanes.py --url URL --server-pid PID --group G --consumers K
        --expect N [--batch 1000] [--handler-ms 0] [--failing SOURCE]

Every consumer is a process of its own (forked), connected before the clock starts; all start
together. Each calls tributary.consumer_next in a loop (acking the batch before with each call),
sleeping --handler-ms per batch (a handler that takes time) or not at all. --failing SOURCE: the
events of that source are failed (consumer_ack with their seqs) and never counted; an ordered group
then holds that source back, and, without lanes, every source behind it.

A consumer that gets no batch goes on asking (2 ms apart) until the consumers together have acked
--expect events, then says it stops (consumer_leave: its lanes go to the others) and ends: in a group
of lanes a consumer may hold no lane for a moment while the lanes are shared out.

Meanwhile the parent samples pg_stat_activity every 10 ms: of the consumers' sessions that are
active, how many wait on a lock (wait_event_type Lock: a row lock or a transaction's, the turns
consumers of one group take).

Prints one line:
    events=N batches=B seconds=S client_cpu_s=C server_cpu_s=V lock_wait_pct=W samples=M
lock_wait_pct: the share of (sample, active consumer session) pairs waiting on a lock.
"""
import argparse
import json
import multiprocessing
import os
import resource
import sys
import threading
import time

import psycopg

TIMEOUT_S = 600
HZ = os.sysconf("SC_CLK_TCK")
APPLICATION = "bench-consume-lanes"


def fail(message):
    print(f"consume_lanes: {message}", file=sys.stderr)
    sys.exit(1)


def own_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def server_cpu_s(pid):
    """utime+stime of the postmaster, its live children and the children it reaped."""
    total = 0
    for p in [pid] + children(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) if p == pid else sum(int(x) for x in fields[11:13])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / HZ


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except FileNotFoundError:
        return []


def consumer(args, name, start, counted, results):
    conn = psycopg.connect(args.url, autocommit=True, application_name=APPLICATION)
    results.put(("ready", name))
    if not start.wait(TIMEOUT_S):
        return
    t0, cpu0 = time.monotonic(), own_cpu_s()
    events = batches = 0
    previous = (None, None)
    failing = args.failing
    while True:
        batch_id, token, events_json, _acked = conn.execute(
            "SELECT batch_id, lease_token, events, previous_acked"
            "  FROM tributary.consumer_next(%s, %s, %s::int, %s::bigint, %s::uuid)",
            (args.group, name, args.batch, previous[0], previous[1])).fetchone()
        previous = (None, None)
        if batch_id is None:
            if counted.value >= args.expect or time.monotonic() - t0 > TIMEOUT_S:
                break
            time.sleep(0.002)
            continue
        decoded = json.loads(events_json)
        if args.handler_ms:
            time.sleep(args.handler_ms / 1000)
        bad = [e["seq"] for e in decoded if failing and e["source"] == failing]
        good = len(decoded) - len(bad)
        if bad:
            conn.execute("SELECT tributary.consumer_ack(%s, %s, %s, 'failing source')", (batch_id, token, bad))
        else:
            previous = (batch_id, token)  # acked by the next call
        events += good
        batches += 1
        with counted.get_lock():
            counted.value += good
    if previous[0] is not None:
        conn.execute("SELECT tributary.consumer_ack(%s, %s)", previous)
    conn.execute("SELECT tributary.consumer_leave(%s, %s)", (args.group, name))
    t1, cpu1 = time.monotonic(), own_cpu_s()
    conn.close()
    results.put(("done", events, batches, t0, t1, cpu1 - cpu0))


def sample_waits(url, stop, tally):
    conn = psycopg.connect(url, autocommit=True)
    while not stop.is_set():
        waiting, active = conn.execute(
            "SELECT count(*) FILTER (WHERE wait_event_type = 'Lock'), count(*)"
            "  FROM pg_stat_activity WHERE application_name = %s AND state = 'active'", (APPLICATION,)).fetchone()
        tally[0] += waiting
        tally[1] += active
        tally[2] += 1
        time.sleep(0.01)
    conn.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--consumers", type=int, default=1)
    parser.add_argument("--expect", type=int, required=True, help="events to ack in all before stopping")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--handler-ms", type=float, default=0)
    parser.add_argument("--failing", help="a source whose events are failed and not counted")
    args = parser.parse_args()

    context = multiprocessing.get_context("fork")
    start, results, counted = context.Event(), context.Queue(), context.Value("q", 0)
    processes = [context.Process(target=consumer, args=(args, f"c{i}", start, counted, results), daemon=True)
                 for i in range(args.consumers)]
    for p in processes:
        p.start()
    for _ in processes:
        if results.get(timeout=TIMEOUT_S)[0] != "ready":
            fail("a consumer did not connect")
    stop, tally = threading.Event(), [0, 0, 0]
    sampler = threading.Thread(target=sample_waits, args=(args.url, stop, tally))
    cpu0 = server_cpu_s(args.server_pid)
    sampler.start()
    start.set()
    done = [results.get(timeout=TIMEOUT_S) for _ in processes]
    stop.set()
    sampler.join()
    cpu1 = server_cpu_s(args.server_pid)
    for p in processes:
        p.join(TIMEOUT_S)
    events = sum(d[1] for d in done)
    if events < args.expect:
        fail(f"{events} events acked, not {args.expect}")
    seconds = max(d[4] for d in done) - min(d[3] for d in done)
    print(f"events={events} batches={sum(d[2] for d in done)} seconds={seconds:.3f} "
          f"client_cpu_s={sum(d[5] for d in done):.3f} server_cpu_s={cpu1 - cpu0:.2f} "
          f"lock_wait_pct={100 * tally[0] / max(tally[1], 1):.1f} samples={tally[2]}")


if __name__ == "__main__":
    main()
