#!/usr/bin/env python3
"""The night's figures for scripts/scale-out.sh (docs/bench.md, "A million-item night").

  night-sampler.py sample RUN_ID OUT INTERVAL_S API...   # until the run has ended
  night-sampler.py summary OUT                            # what the samples say
  night-sampler.py ledger SIM_URL SCOPE_CSV               # one effect per key, every one there
  night-sampler.py prune API RUN_ID NODE_PID              # retention on demand, timed

sample: every INTERVAL_S seconds, on each node's API in turn, GET /api/runs/{RUN_ID} (the run view)
and GET /api/runs/{RUN_ID}/items?limit=100&after=S (one item page, S moving through the scope so
that pages of every depth are read), each timed from the request to the last byte of its answer,
one new connection per request as a client would. One line per request:
  <unix time> <node> <view|items> <ms> <http status> <state> <done> <total> <createdAt>
It waits for the run to exist and stops once it has ended.

summary: the items/s of each tenth of the night (the time done crossed each tenth, interpolated
between the samples, from the run's createdAt), the last tenth's rate over the second's, and the
run view's and the item page's latency (median, p90, max) over the samples taken while the run was
RUNNING, for all nodes and for each.

ledger: the sim's GET /ledger (reset before the run) against the scope: no key has more than one
effect, and there are as many keys as accounts the sim has something to clean up for (all but one
in ten, by the Java String.hashCode of the account: docs/bench.md, "What is measured").

prune: POST /api/archive/prune for every run that ended before now (FENCEKEEPER_API_TOKEN, when set,
as the bearer token), then the run view every 2 s until RUN_ID shows its archive's prunedAt: the
time that took, the largest RSS of NODE_PID (the node whose keeper prunes) meanwhile, the archive's
size and events and the rows deleted.
"""
import json
import os
import statistics
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime

ENDED = ("SUCCEEDED", "PARTIAL", "FAILED", "CANCELLED")


def timed(url):
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            body = answer.read()
            status = answer.status
    except urllib.error.HTTPError as e:
        body, status = e.read(), e.code
    except (urllib.error.URLError, OSError):
        body, status = b"", 0
    return (time.perf_counter() - start) * 1000, status, body


def sample(run_id, out, interval, apis):
    encoded = urllib.parse.quote(run_id, safe="")
    tick = 0
    total = 0
    with open(out, "a") as f:
        while True:
            for node, api in enumerate(apis, start=1):
                began = time.time()
                ms, status, body = timed(f"{api}/api/runs/{encoded}")
                state, done, created = "-", 0, "-"
                if status == 200:
                    view = json.loads(body)
                    state, total = view["state"], view["counts"]["total"]
                    done, created = view["counts"]["done"], view["createdAt"]
                f.write(f"{began:.3f} {node} view {ms:.1f} {status} {state} {done} {total} {created}\n")
                if state == "RUNNING" and total > 0:
                    # a prime stride: pages at every depth of the scope, never the same twice running
                    after = (tick * 7919) % total - 1
                    ms, status, _ = timed(f"{api}/api/runs/{encoded}/items?limit=100&after={after}")
                    f.write(f"{time.time():.3f} {node} items {ms:.1f} {status} {state} {done} {total} {created}\n")
                f.flush()
                if state in ENDED:
                    return
                tick += 1
            time.sleep(interval)


def instant(text):
    """An ISO-8601 instant in UTC as the API writes it (up to nanoseconds), in unix seconds."""
    whole, _, fraction = text.rstrip("Z").partition(".")
    seconds = datetime.fromisoformat(whole + "+00:00").timestamp()
    return seconds + (float("0." + fraction) if fraction else 0)


def percentiles(values):
    values = sorted(values)
    if not values:
        return "-"
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    return f"{statistics.median(values):.1f} / {p90:.1f} / {values[-1]:.1f} ms (n={len(values)})"


def summary(out):
    rows = [line.split() for line in open(out) if line.strip()]
    views = [r for r in rows if r[2] == "view" and r[4] == "200"]
    if not views:
        print("  no run view was read")
        return
    total = int(views[-1][7])
    created = instant(views[-1][8])
    progress = [(float(r[0]), int(r[6])) for r in views]
    crossed = [created]
    for k in range(1, 11):
        threshold = total * k / 10
        previous = (created, 0)
        for t, done in progress:
            if done >= threshold:
                t0, d0 = previous
                crossed.append(t0 + (threshold - d0) / (done - d0) * (t - t0) if done > d0 else t)
                break
            previous = (t, done)
    rates = [total / 10 / (b - a) if b > a else 0 for a, b in zip(crossed, crossed[1:])]
    print("  items/s per tenth: " + " ".join(f"{r:.0f}" for r in rates))
    if len(rates) == 10 and rates[1] > 0:
        print(f"  last tenth / second tenth: {rates[9]:.0f} / {rates[1]:.0f} = {rates[9] / rates[1]:.2f}")
    nodes = sorted({r[1] for r in rows})
    for kind, name in (("view", "run view  "), ("items", "item page ")):
        running = [r for r in rows if r[2] == kind and r[5] == "RUNNING" and r[4] == "200"]
        print(f"  {name} while RUNNING, median / p90 / max: {percentiles([float(r[3]) for r in running])}")
        if len(nodes) > 1:
            for node in nodes:
                mine = [float(r[3]) for r in running if r[1] == node]
                print(f"    node {node}: {percentiles(mine)}")
    # before the run exists its view is 404: a client polling a run being created sees that too
    first = next(i for i, r in enumerate(rows) if r[4] == "200")
    failed = [r for r in rows[first:] if r[4] != "200"]
    if failed:
        print(f"  {len(failed)} requests after the first answer did not answer 200 (0: no answer)")


def java_hash(text):
    """Java's String.hashCode: over the UTF-16 code units, in 32-bit arithmetic."""
    h = 0
    for ch in text:
        point = ord(ch)
        units = [point] if point < 0x10000 else [0xD7C0 + (point >> 10), 0xDC00 + (point & 0x3FF)]
        for unit in units:
            h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def ledger(sim, scope):
    with urllib.request.urlopen(f"{sim}/ledger", timeout=600) as answer:
        effects = json.loads(answer.read())["effects"]
    with open(scope) as f:
        next(f)  # the header
        expected = sum(1 for line in f if java_hash(line.split(",")[0]) % 10 != 0)
    twice = sum(1 for count in effects.values() if count > 1)
    ok = twice == 0 and len(effects) == expected and sum(effects.values()) == expected
    print(
        f"  ledger: {sum(effects.values())} effects under {len(effects)} keys, {twice} keys more"
        f" than once; expected {expected}: {'OK' if ok else 'NOT OK'}"
    )
    return ok


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return 0


def prune(api, run_id, pid):
    token = os.environ.get("FENCEKEEPER_API_TOKEN")
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    before = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 1))
    started = time.time()
    request = urllib.request.Request(
        f"{api}/api/archive/prune",
        data=json.dumps({"endedBefore": before}).encode(),
        headers=headers,
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        plan = json.loads(answer.read())
    peak = rss_mb(pid)
    encoded = urllib.parse.quote(run_id, safe="")
    while True:
        view = urllib.request.urlopen(
            urllib.request.Request(f"{api}/api/runs/{encoded}", headers=headers), timeout=60
        )
        archive = json.loads(view.read())["archive"]
        peak = max(peak, rss_mb(pid))
        if archive and archive["prunedAt"]:
            break
        time.sleep(2)
    print(
        f"  prune ({plan['total']} runs): {time.time() - started:.0f} s to prunedAt; archive"
        f" {archive['bytes'] / 1048576:.1f} MiB ({archive['items']} items, {archive['events']}"
        f" events), {archive['rowsDeleted']} rows deleted; the pruning node's RSS at most {peak} MiB"
    )


if __name__ == "__main__":
    if sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:])
    elif sys.argv[1] == "ledger":
        sys.exit(0 if ledger(sys.argv[2], sys.argv[3]) else 1)
    elif sys.argv[1] == "prune":
        prune(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        summary(sys.argv[2])
