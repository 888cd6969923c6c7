"""What production adds to checkpoints, measured on the live lab: incremental against
full checkpoints, and jittered uploads to a store that answers "503 Slow Down".

    python benchmarks/bench_live_checkpoints.py [--repeats 5]

Incremental: 3 nodes, each keeping its 100,000 in 1,000 accounts (100 bytes each); a full
checkpoint, then, after the transfers have touched about 5 % of the accounts, an
incremental one; bytes written by each (parts and chunks), for chunks of 1 and of 8
accounts. The text claims "up to 90 %" less.

Jitter: 8 nodes writing to a ThrottledStore that takes 20 writes a second per key
prefix (100 ms each) and answers 503 beyond, as S3 limits its rate per prefix;
snapshots with no jitter and with 0-500 ms: writes slowed down (each one a retry or a
failure), snapshots failed, median duration.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from typing import Any

from snapshotlib.course.lesson_10 import MAX_RATE, jitter_run
from snapshotlib.live.cluster import LiveCluster
from snapshotlib.live.keyed_state import table_from_json
from snapshotlib.live.storage import read

KEYS, KEY_BYTES, NODES, MONEY = 1000, 100, 3, 100_000


def sent(cluster: LiveCluster) -> int:
    return sum(h["sent"] for h in cluster.health().values() if h is not None)


def chunk_uris(cluster: LiveCluster, sid: str) -> dict[str, set[str]]:
    manifest = json.loads(read(cluster.status(sid)["checkpoint_manifest_uri"]))
    out = {}
    for p in manifest["parts"]:
        part = json.loads(read(p["part_uri"]))
        out[p["node_id"]] = {u for _, u in table_from_json(p["node_id"], part["state"]).values()}
    return out


def incremental(chunk_keys: int, key_bytes: int, share: float) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="bench-incremental-") as folder,
        LiveCluster(
            NODES,
            rate=5.0,
            initial_money=MONEY,
            state_keys=KEYS,
            key_bytes=key_bytes,
            chunk_keys=chunk_keys,
            workdir=folder,
        ) as cluster,
    ):
        # a transfer touches one account at its sender and one at its receiver; counted
        # from before the full checkpoint, whose state is recorded after its trigger
        start, target = sent(cluster), int(share * KEYS * NODES / 2)
        full = cluster.trigger("P1", "full")
        cluster.wait(full, timeout=300)
        while sent(cluster) - start < target:
            time.sleep(0.05)
        inc = cluster.trigger("P1", "incremental")
        answer = cluster.wait(inc, timeout=300)
        assert answer["status"] == "COMPLETED", answer
        before, after = chunk_uris(cluster, full), chunk_uris(cluster, inc)
        rewritten = sum(len(after[n] - before[n]) for n in after)
        chunks = sum(len(after[n]) for n in after)
        return {
            "full": cluster.status(full)["total_size_bytes"],
            "incremental": answer["total_size_bytes"],
            "rewritten": rewritten / chunks,
            "transfers": sent(cluster) - start,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    print(f"incremental against full: {NODES} nodes x {KEYS} accounts, ~5 % of them changed")
    print("bytes/account  accounts/chunk  chunks rewritten  full bytes  incremental bytes  saved")
    for key_bytes, chunk_keys in ((KEY_BYTES, 1), (KEY_BYTES, 8), (KEY_BYTES, 32), (1000, 1)):
        r = incremental(chunk_keys, key_bytes, 0.05)
        saved = 1 - r["incremental"] / r["full"]
        print(
            f"{key_bytes:13}  {chunk_keys:14}  {r['rewritten']:16.1%}  {r['full']:10,}  "
            f"{r['incremental']:17,}  {saved:5.0%}"
        )

    print(
        f"\njittered uploads: 8 nodes, store of {MAX_RATE} writes a second per prefix, "
        f"{args.repeats} snapshots"
    )
    print("jitter ms  writes slowed down (503)  writes done  snapshots failed  median ms")
    for jitter_ms in (0, 500):
        r = jitter_run(jitter_ms, snapshots=args.repeats, timeout_s=300)
        median = "-" if r["median_ms"] is None else f"{r['median_ms']:,.0f}"
        print(f"{jitter_ms:9}  {r['slowed']:24}  {r['written']:11}  {r['failed']:16}  {median:>9}")


if __name__ == "__main__":
    main()
