#!/usr/bin/python3
"""The Python consumers of bench/consume: one client, one function per system.

    /usr/bin/python3 bench/consume_peers.py SYSTEM --server-pid PID --events N [--batch 1000]
        (--url URL | --port PORT) [--groups G[,G...]] [--consumers K]

SYSTEM, each drained by consumers that do nothing with the events:
    tributary-read-ack  tributary.consumer_read (one row per event), then consumer_ack: two calls per
                        batch. The groups must exist (the caller creates them from the beginning).
    tributary-next      tributary.consumer_next: one call per batch, acking the previous one; the batch
                        arrives as one JSON array, decoded with json.loads (by psycopg when the column
                        is of type json, as in builds before the events became text).
    pgq                 PgQ, queue "bench", consumer GROUP (registered by the caller before the events
                        went in): one transaction per batch of finish_batch (the previous batch),
                        next_batch and get_batch_events, as consumer_next does in one call.
    redis               Redis Streams, stream "bench": preloads N entries first (pipelined XADD, 1000 a
                        round trip), XGROUP CREATE ... 0 for each group, then XREADGROUP COUNT BATCH and
                        XACK of the ids.

Runs on Debian's /usr/bin/python3 with python3-psycopg and python3-redis. Every consumer is a process
of its own (forked), K per group, connected before the clock starts; all start together. What is
measured is the consume phase only: wall time from the start to the end of the last consumer, client
CPU (getrusage of each consumer, summed), server CPU (utime+stime from /proc of the server process
PID, its live children and the children it reaped: for PostgreSQL the postmaster, for Redis
redis-server) sampled before the start and after the consumers' sessions are gone. Prints one line:

    events=N batches=B seconds=S client_cpu_s=C server_cpu_s=V other_pct=P lost_acks=0

other_pct: the share of the machine's cores that other work (and VM steal) took meanwhile.

Exits 1 with a message unless every group got exactly N events, every batch was acked, and nothing is
left (tributary: group_status says 0 behind, 0 in flight, 0 retries, 0 dead letters; Redis: nothing pending; PgQ:
every batch held exactly BATCH events, no batch left).
"""
import argparse
import collections
import json
import multiprocessing
import os
import queue
import resource
import sys
import time

import psycopg
import redis

STREAM = "bench"  # the Redis stream
PGQ_QUEUE = "bench"
SOURCES = 40  # as bench/consume's rows_sql: event i comes from source bench.s(i % SOURCES)
TIMEOUT_S = 600  # a consumer that takes longer has hung: fail rather than wait forever
HZ = os.sysconf("SC_CLK_TCK")

Drained = collections.namedtuple("Drained", "events batches lost_acks")


def fail(message):
    sys.exit(f"consume_peers: {message}")


# --- the consumers, one per system ------------------------------------------------------------------


def consume_tributary_read_ack(conn, group, name, batch):
    events = batches = lost = 0
    while True:
        rows = conn.execute("SELECT * FROM tributary.consumer_read(%s, %s, %s::int)", (group, name, batch)).fetchall()
        if not rows:
            return Drained(events, batches, lost)
        batch_id, lease_token = rows[0][0], rows[0][1]
        if conn.execute("SELECT tributary.consumer_ack(%s::bigint, %s::uuid)", (batch_id, lease_token)).fetchone()[0]:
            events += len(rows)
            batches += 1
        else:
            lost += 1


def consume_tributary_next(conn, group, name, batch):
    events = batches = lost = 0
    previous_id = previous_token = None
    previous_events = 0
    while True:
        batch_id, lease_token, events_json, previous_acked = conn.execute(
            "SELECT batch_id, lease_token, events, previous_acked"
            "  FROM tributary.consumer_next(%s, %s, %s::int, %s::bigint, %s::uuid)",
            (group, name, batch, previous_id, previous_token)).fetchone()
        if previous_id is not None:
            if previous_acked:
                events += previous_events
                batches += 1
            else:
                lost += 1
        if batch_id is None:
            return Drained(events, batches, lost)
        if isinstance(events_json, str):  # events is text since the lead's c1bbc28 (json before): decode it here
            events_json = json.loads(events_json)
        previous_id, previous_token, previous_events = batch_id, lease_token, len(events_json)


def consume_pgq(conn, group, name, batch):
    events = batches = 0
    previous_id = None
    while True:
        with conn.transaction():
            if previous_id is not None:
                conn.execute("SELECT pgq.finish_batch(%s::bigint)", (previous_id,))
            batch_id = conn.execute("SELECT pgq.next_batch(%s, %s)", (PGQ_QUEUE, group)).fetchone()[0]
            rows = [] if batch_id is None else conn.execute("SELECT * FROM pgq.get_batch_events(%s::bigint)",
                                                            (batch_id,)).fetchall()
        if previous_id is not None:
            batches += 1
        if batch_id is None:
            return Drained(events, batches, 0)
        if len(rows) != batch:
            fail(f"pgq: batch {batch_id} held {len(rows)} events, not {batch}: the ticks are not where they should be")
        events += len(rows)
        previous_id = batch_id


def consume_redis(client, group, name, batch):
    events = batches = lost = 0
    while True:
        reply = client.xreadgroup(group, name, {STREAM: ">"}, count=batch)
        entries = reply[0][1] if reply else []
        if not entries:
            return Drained(events, batches, lost)
        ids = [entry_id for entry_id, _fields in entries]
        if client.xack(STREAM, group, *ids) == len(ids):
            events += len(ids)
            batches += 1
        else:
            lost += 1


# --- connecting, preloading, checking -----------------------------------------------------------------


def pg_connect(args):
    return psycopg.connect(args.url, autocommit=True)


def pg_session(conn):
    return conn.info.backend_pid


def redis_connect(args):
    return redis.Redis(host="127.0.0.1", port=args.port)


def payload(i):
    """The same text as bench/consume's rows_sql payload as PostgreSQL's jsonb prints it."""
    n = i % 100000
    decimals = 20 if n < 100 else 16  # the scale PostgreSQL gives n / 100.0
    amount = f"{n // 100}.{n % 100:02d}" + "0" * (decimals - 2)
    return (f'{{"id": {i}, "note": "{"x" * 160}", "type": "order.created", "amount": {amount}, '
            f'"customer": "c-{i % 9973}"}}')


def redis_preload(args):
    client = redis_connect(args)
    pipe = client.pipeline(transaction=False)
    for i in range(1, args.events + 1):
        pipe.xadd(STREAM, {"source": f"bench.s{i % SOURCES}", "payload": payload(i)})
        if i % 1000 == 0:
            pipe.execute()
    pipe.execute()
    for group in args.groups:
        client.xgroup_create(STREAM, group, id="0")
    while client.info("persistence").get("aof_rewrite_in_progress"):  # a settled server, as after a load
        time.sleep(0.1)
    client.close()


def tributary_check(args, drained_by_group):
    with psycopg.connect(args.url, autocommit=True) as conn:
        for group in args.groups:
            left = conn.execute(
                "SELECT events_behind, batches_in_flight, retries_waiting, dead_letters"
                "  FROM tributary.group_status WHERE name = %s", (group,)).fetchone()
            if left != (0, 0, 0, 0):
                fail(f"group {group}: (events behind, batches in flight, retries waiting, dead letters) = {left}, "
                     "not all 0")


def pgq_check(args, drained_by_group):
    for group, drained in drained_by_group.items():
        if drained.batches != -(-args.events // args.batch):
            fail(f"pgq consumer {group}: {drained.batches} batches, not {-(-args.events // args.batch)}")


def redis_check(args, drained_by_group):
    client = redis_connect(args)
    for group in args.groups:
        pending = client.xpending(STREAM, group)["pending"]
        if pending != 0:
            fail(f"redis group {group}: {pending} entries still pending")
    client.close()


System = collections.namedtuple("System", "connect session consume preload check")
SYSTEMS = {
    "tributary-read-ack": System(pg_connect, pg_session, consume_tributary_read_ack, None, tributary_check),
    "tributary-next": System(pg_connect, pg_session, consume_tributary_next, None, tributary_check),
    "pgq": System(pg_connect, pg_session, consume_pgq, None, pgq_check),
    "redis": System(redis_connect, lambda client: None, consume_redis, redis_preload, redis_check),
}

# --- CPU ----------------------------------------------------------------------------------------------


def own_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def server_processes(pid):
    """(pid, stat fields after the command name) of PID and its children: fields[1] is the ppid,
    fields[11:15] utime stime cutime cstime in clock ticks."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(")") + 2:].split()
        if int(entry) == pid or int(fields[1]) == pid:
            yield int(entry), fields


def server_cpu_s(pid):
    """CPU seconds used so far by the server: the process itself, its live children, and (through its
    cutime/cstime) every child it has reaped, such as a PostgreSQL backend whose session ended."""
    ticks = 0
    for child, fields in server_processes(pid):
        ticks += sum(int(x) for x in fields[11:15]) if child == pid else int(fields[11]) + int(fields[12])
    return ticks / HZ


def machine_busy_s():
    """CPU seconds used so far by everything on this machine, and what the hypervisor stole from it
    (user nice system irq softirq steal in /proc/stat): to say how much other work disturbed a run."""
    with open("/proc/stat") as f:
        cpu = f.readline().split()
    return sum(int(cpu[i]) for i in (1, 2, 3, 6, 7, 8)) / HZ


def client_sessions(pid):
    """The postmaster PID's children that are, or were a moment ago, backends of client sessions: their
    title names the client's address; one that is exiting has no title left, and a zombie waits to be
    reaped. While any of these comes and goes, a sample of server_cpu_s may miss a backend's CPU (read
    neither among the children nor yet in the postmaster's cutime) or count it twice."""
    sessions = set()
    for child, fields in server_processes(pid):
        if child == pid:
            continue
        try:
            with open(f"/proc/{child}/cmdline", "rb") as f:
                title = f.read()
        except OSError:
            continue  # reaped meanwhile
        if fields[0] == "Z" or not title or b"127.0.0.1(" in title or b"[local]" in title:
            sessions.add(child)
    return sessions


def wait_sessions_gone(pid, keep=frozenset()):
    deadline = time.monotonic() + 30
    while client_sessions(pid) - keep:
        if time.monotonic() > deadline:
            fail(f"client sessions of PostgreSQL still there after 30 s: {sorted(client_sessions(pid) - keep)}")
        time.sleep(0.02)


# --- the run ------------------------------------------------------------------------------------------


def consumer(system, args, group, name, start, messages):
    """One consumer process: connects, says so, waits for the start, drains, reports."""
    try:
        client = system.connect(args)
        messages.put(("ready", system.session(client)))
        if not start.wait(TIMEOUT_S):
            return
        t0, cpu0 = time.monotonic(), own_cpu_s()
        drained = system.consume(client, group, name, args.batch)
        t1, cpu1 = time.monotonic(), own_cpu_s()
        client.close()
        messages.put(("done", group, drained, t0, t1, cpu1 - cpu0))
    except BaseException as e:  # noqa: B036 -- SystemExit from fail() too: the driver must hear of it
        messages.put(("error", f"{group}/{name}: {e!r}"))


def next_message(messages, what):
    try:
        message = messages.get(timeout=TIMEOUT_S)
    except queue.Empty:
        fail(f"no consumer {what} within {TIMEOUT_S} s")
    if message[0] == "error":
        fail(f"a consumer failed: {message[1]}")
    return message


def run(system, args):
    if system.preload:
        system.preload(args)
    context = multiprocessing.get_context("fork")
    start, messages = context.Event(), context.Queue()
    processes = [
        context.Process(target=consumer, args=(system, args, group, f"bench-{c}", start, messages), daemon=True)
        for group in args.groups for c in range(args.consumers)
    ]
    for p in processes:
        p.start()
    sessions = {next_message(messages, "connected")[1] for _ in processes} - {None}
    if sessions:
        wait_sessions_gone(args.server_pid, keep=sessions)  # the loader's and the caller's psql sessions
    cpu0, busy0, window0 = server_cpu_s(args.server_pid), machine_busy_s(), time.monotonic()
    start.set()
    done = [next_message(messages, "finished") for _ in processes]
    for p in processes:
        p.join(TIMEOUT_S)
    if sessions:
        wait_sessions_gone(args.server_pid)
    cpu1, busy1, window1 = server_cpu_s(args.server_pid), machine_busy_s(), time.monotonic()

    drained_by_group = {}
    for _, group, drained, _t0, _t1, _cpu in done:
        before = drained_by_group.get(group, Drained(0, 0, 0))
        drained_by_group[group] = Drained(*(a + b for a, b in zip(before, drained)))
    for group, drained in drained_by_group.items():
        if drained.events != args.events or drained.lost_acks != 0:
            fail(f"group {group}: {drained.events} events consumed and acked, not {args.events}; "
                 f"{drained.lost_acks} acks refused")
    system.check(args, drained_by_group)
    seconds = max(m[4] for m in done) - min(m[3] for m in done)
    client_cpu = sum(m[5] for m in done)
    other = (busy1 - busy0 - client_cpu - (cpu1 - cpu0)) / ((window1 - window0) * os.cpu_count())
    print(f"events={sum(d.events for d in drained_by_group.values())} "
          f"batches={sum(d.batches for d in drained_by_group.values())} seconds={seconds:.3f} "
          f"client_cpu_s={client_cpu:.3f} server_cpu_s={cpu1 - cpu0:.2f} other_pct={max(other, 0) * 100:.0f} "
          "lost_acks=0")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("system", choices=sorted(SYSTEMS))
    parser.add_argument("--server-pid", type=int, required=True, help="the postmaster or redis-server")
    parser.add_argument("--events", type=int, required=True, help="how many events each group must get")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--url", help="PostgreSQL: the database")
    parser.add_argument("--port", type=int, help="Redis: its port on 127.0.0.1")
    parser.add_argument("--groups", default="bench", help="comma-separated; consumed at the same time")
    parser.add_argument("--consumers", type=int, default=1, help="consumers per group, a process each")
    args = parser.parse_args()
    args.groups = args.groups.split(",")
    if (args.system == "redis") != (args.port is not None) or (args.system == "redis") == (args.url is not None):
        parser.error("give --port for redis, --url for the others")
    return args


if __name__ == "__main__":
    arguments = parse_args()
    run(SYSTEMS[arguments.system], arguments)
