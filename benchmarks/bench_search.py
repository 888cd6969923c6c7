"""Exhaustive search: states, states per second and the reduction, against a bare BFS.

The system (issue 16): 3 processes on a complete graph, each sending 2 messages (to its
two neighbours in turn, one token each), one Chandy–Lamport snapshot started by any one
process, every schedule. On FIFO channels the whole space is explored; on non-FIFO
channels the search stops at the first (shortest) counterexample.

The reference runs in the same process, turn about with the engine: a bare Python BFS
over the same transition relation, written here without the engine (tuples for states,
the marker rules inline, the same audit of what each channel must record). It keeps the
same state abstraction, so without reduction both count the same distinct states; the
ratio of their states per second is the engine's overhead. The engine runs the real
simulator, the real algorithm class and the real application (which is what lets it
search a learner's class), but only for an action it has not seen from the acting
process's part of the state: the others it looks up (``snapshotlib/search/memo.py``).

Run from the repository root::

    python3 benchmarks/bench_search.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from collections import Counter, deque
from pathlib import Path
from typing import Any

from machine_info import describe as describe_machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from snapshotlib import Network  # noqa: E402
from snapshotlib.algorithms import ChandyLamport  # noqa: E402
from snapshotlib.search import SnapshotPlan, System, each_sends, search  # noqa: E402

PROCS = ("P1", "P2", "P3")
SENDS = 2
TOKENS = 3


def system(fifo: bool) -> System:
    net = Network(PROCS, fifo=fifo)
    return System(
        net,
        "tokens",
        {p: TOKENS for p in PROCS},
        ChandyLamport,
        programs=each_sends(net, "tokens", SENDS),
        snapshots=(SnapshotPlan("s1", PROCS),),
        name=f"bench-{'fifo' if fifo else 'non-fifo'}",
    )


# --------------------------------------------------------------- bare BFS
# A state: (pcs, started, tokens, queues, recorded, channels, audit, done)
#   queues[c]: items ("m", label, red) or ("k",) for the marker
#   recorded[p]: tokens recorded, or None; channels[c]: (status, contents),
#   status 0 not recorded yet, 1 recording, 2 closed
#   audit: (orphan label or None, expected contents per channel) until done
N = len(PROCS)
CHANNELS = [(a, b) for a in range(N) for b in range(N) if a != b]
INPUTS = [[c for c, (_, b) in enumerate(CHANNELS) if b == p] for p in range(N)]
OUTPUTS = [[c for c, (a, _) in enumerate(CHANNELS) if a == p] for p in range(N)]
DESTS = [[CHANNELS[c][1] for c in OUTPUTS[p]] for p in range(N)]


def _record(state: list[Any], p: int, via: int | None) -> None:
    tokens, queues, recorded, channels = state[2], state[3], state[4], state[5]
    recorded[p] = tokens[p]
    for c in INPUTS[p]:
        channels[c] = (2, ()) if c == via else (1, ())
    for c in OUTPUTS[p]:
        queues[c] = (*queues[c], ("k",))


def _complete(state: list[Any], fifo: bool) -> None:
    recorded, channels, audit = state[4], state[5], state[6]
    if any(r is None for r in recorded) or any(ch[0] != 2 for ch in channels):
        return
    orphan, expected = audit
    mismatch = None
    if orphan is None:
        for c in range(len(CHANNELS)):
            want = expected[c] + tuple(m for m in state[3][c] if m[0] == "m" and not m[2])
            got = channels[c][1]
            if (got != want) if fifo else (Counter(got) != Counter(want)):
                mismatch = (c, got, want)
                break
    total = sum(recorded) + sum(len(ch[1]) for ch in channels)
    state[7] = (orphan, mismatch, total)
    state[6] = None


def _successors(s: tuple[Any, ...], fifo: bool) -> list[tuple[Any, ...]]:
    pcs, started, tokens, queues, recorded, channels, audit, done = s
    out = []
    for p in range(N):  # program steps: send one token to the next neighbour
        pc = pcs[p]
        if pc < SENDS and tokens[p] >= 1:
            dst = DESTS[p][pc % len(DESTS[p])]
            c = CHANNELS.index((p, dst))
            q = list(queues)
            q[c] = (*q[c], ("m", f"P{p + 1}.{pc + 1}", recorded[p] is not None))
            t = list(tokens)
            t[p] -= 1
            out.append(((*pcs[:p], pc + 1, *pcs[p + 1 :]), started, tuple(t), tuple(q),
                        recorded, channels, audit, done))  # fmt: skip
    if not started:  # one snapshot, started by any one process
        for p in range(N):
            st = [pcs, frozenset({p}), tokens, list(queues), list(recorded), list(channels),
                  audit, done]  # fmt: skip
            _record(st, p, None)
            out.append(_freeze(st, fifo))
    for c, q in enumerate(queues):
        if not q:
            continue
        for pos in range(1 if fifo else len(q)):
            item = q[pos]
            st = [pcs, started, list(tokens), list(queues), list(recorded), list(channels),
                  audit, done]  # fmt: skip
            st[3][c] = q[:pos] + q[pos + 1 :]
            dst = CHANNELS[c][1]
            if item[0] == "k":
                if recorded[dst] is None:
                    _record(st, dst, c)
                else:
                    st[5][c] = (2, channels[c][1])
            else:
                st[2][dst] += 1
                if channels[c][0] == 1:
                    st[5][c] = (1, (*channels[c][1], item))
                if st[6] is not None:
                    orphan, expected = st[6]
                    if item[2] and recorded[dst] is None:
                        st[6] = (orphan or item[1], expected)
                    elif not item[2] and recorded[dst] is not None:
                        e = list(expected)
                        e[c] = (*e[c], item)
                        st[6] = (orphan, tuple(e))
            out.append(_freeze(st, fifo))
    return out


def _freeze(st: list[Any], fifo: bool) -> tuple[Any, ...]:
    if st[7] is None:
        _complete(st, fifo)
    return (st[0], st[1], tuple(st[2]), tuple(st[3]), tuple(st[4]), tuple(st[5]), st[6], st[7])


def _key(s: tuple[Any, ...], fifo: bool) -> Any:
    if fifo:
        return s
    channels = tuple((st, frozenset(Counter(got).items())) for st, got in s[5])
    audit = s[6]
    if audit is not None:
        audit = (audit[0], tuple(frozenset(Counter(e).items()) for e in audit[1]))
    return (*s[:5], channels, audit, s[7])


def bare_bfs(fifo: bool, stop_at_violation: bool) -> dict[str, Any]:
    """Breadth-first over every schedule; each distinct state once."""
    began = time.perf_counter()
    root = ((0,) * N, frozenset(), (TOKENS,) * N, ((),) * len(CHANNELS), (None,) * N,
            ((0, ()),) * len(CHANNELS), (None, ((),) * len(CHANNELS)), None)  # fmt: skip
    seen = {hash(_key(root, fifo))}
    todo = deque([(root, 0)])
    quiescent = 0
    depth = 0
    found = None
    while todo:
        s, d = todo.popleft()
        nexts = _successors(s, fifo)
        if not nexts:
            quiescent += 1
        for n in nexts:
            k = hash(_key(n, fifo))
            if k in seen:
                continue
            seen.add(k)
            if n[7] is not None and (n[7][0] is not None or n[7][1] is not None):
                found = d + 1
                if stop_at_violation:
                    todo.clear()
                    break
            depth = max(depth, d + 1)
            todo.append((n, d + 1))
    seconds = time.perf_counter() - began
    return {"distinct": len(seen), "seconds": seconds, "quiescent": quiescent,
            "depth": depth, "violation_depth": found}  # fmt: skip


# ------------------------------------------------------------- measuring
def engine(fifo: bool, reduction: bool | str) -> dict[str, Any]:
    began = time.perf_counter()
    result = search(system(fifo), reduction=reduction, max_states=None)
    seconds = time.perf_counter() - began  # everything, the confirming search included
    s = result.stats
    extra = result.confirm_stats.distinct if result.confirm_stats is not None else 0
    return {
        "distinct": s.distinct + extra,
        "seconds": seconds,
        "quiescent": s.quiescent,
        "transitions": s.transitions,
        "violation_depth": result.violation.depth if result.violation else None,
    }


def peak_bytes(run: Any) -> tuple[int, dict[str, Any]]:
    """The most memory Python held at once during ``run()`` (tracemalloc), and its
    result; a pass of its own, as tracing slows everything down."""
    gc.collect()
    tracemalloc.start()
    try:
        result = run()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(describe_machine())
    print(f"system: {len(PROCS)} processes, complete graph, each sends {SENDS}, one "
          "Chandy-Lamport snapshot from any initiator")  # fmt: skip
    runs: dict[str, list[dict[str, Any]]] = {}
    for _ in range(args.repeats):
        for name, run in (
            ("fifo, reduced", lambda: engine(True, True)),
            ("fifo, no reduction", lambda: engine(True, False)),
            ("fifo, sleep sets", lambda: engine(True, "sleep")),
            ("fifo, bare BFS", lambda: bare_bfs(True, False)),
            ("non-fifo, reduced", lambda: engine(False, True)),
            ("non-fifo, no reduction", lambda: engine(False, False)),
            ("non-fifo, bare BFS", lambda: bare_bfs(False, True)),
        ):
            runs.setdefault(name, []).append(run())

    memory = {
        "engine": peak_bytes(lambda: engine(True, False)),
        "bare BFS": peak_bytes(lambda: bare_bfs(True, False)),
    }

    def med(name: str, field: str) -> float:
        return statistics.median(r[field] for r in runs[name])

    print(f"\n{'run':24} {'distinct':>9} {'seconds':>8} {'states/s':>9} {'cex depth':>9}")
    for name, rs in runs.items():
        d, sec = rs[0]["distinct"], med(name, "seconds")
        cex = rs[0].get("violation_depth")
        print(f"{name:24} {d:>9,} {sec:>8.2f} {d / sec:>9,.0f} {cex if cex else '-':>9}")
    fifo_full = runs["fifo, no reduction"][0]["distinct"]
    fifo_reduced = runs["fifo, reduced"][0]["distinct"]
    engine_rate = fifo_full / med("fifo, no reduction", "seconds")
    bare_rate = runs["fifo, bare BFS"][0]["distinct"] / med("fifo, bare BFS", "seconds")
    print(f"\nreduction (FIFO): {fifo_full:,} states without, {fifo_reduced:,} with "
          f"({fifo_full / fifo_reduced:.2f}x fewer states); transitions "
          f"{runs['fifo, no reduction'][0]['transitions']:,} -> "
          f"{runs['fifo, reduced'][0]['transitions']:,}")  # fmt: skip
    print(f"bare BFS / engine, states per second without reduction (FIFO): "
          f"{bare_rate / engine_rate:.1f}x (aim: at most 3x)")  # fmt: skip
    # sleep sets prune transitions, never states: the same distinct states as the bare
    # BFS, reached by about half the transitions
    sleep_rate = runs["fifo, sleep sets"][0]["distinct"] / med("fifo, sleep sets", "seconds")
    print(f"bare BFS / engine with sleep sets (same distinct states, "
          f"{runs['fifo, sleep sets'][0]['transitions']:,} transitions): "
          f"{bare_rate / sleep_rate:.1f}x")  # fmt: skip
    per_state = {name: peak / result["distinct"] for name, (peak, result) in memory.items()}
    print(f"peak memory per distinct state without reduction (FIFO, tracemalloc): engine "
          f"{per_state['engine']:,.0f} B, bare BFS {per_state['bare BFS']:,.0f} B "
          f"({per_state['engine'] / per_state['bare BFS']:.1f}x)")  # fmt: skip
    print(f"FIFO space explored (reduced): {med('fifo, reduced', 'seconds'):.1f} s (aim: <= 30 s)")
    print(f"non-FIFO counterexample found (reduced, shortest): "
          f"{med('non-fifo, reduced', 'seconds'):.2f} s (aim: <= 2 s)")  # fmt: skip
    same = (
        runs["fifo, bare BFS"][0]["distinct"]
        == fifo_full
        == runs["fifo, sleep sets"][0]["distinct"]
    )
    print(f"same distinct states, engine (no reduction, sleep sets) and bare BFS (FIFO): {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
