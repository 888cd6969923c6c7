"""The logs' base: a run's logs pruned from the front still check every snapshot that
was registered when the base moved, exactly as the whole logs do; the snapshots begun
before it are closed, and the segments wholly before it are gone.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simulated_nodes import Nodes, cluster

from snapshotlib.live.action_log import BASE_FILE, ActionLog
from snapshotlib.live.log_base import load_base, rebase, replay_logs
from snapshotlib.live.runlog import RunLogError, check_live_snapshot
from snapshotlib.live.spec import ClusterSpec


def write_logs(folder: Path, nodes: Nodes, segment_lines: int) -> None:
    for node, lines in nodes.logs.items():
        log = ActionLog(folder, node, segment_lines=segment_lines)
        for line in lines:
            log.write(json.dumps(line) + "\n")
        log.close()


def simulated_run(seed: int, kind: str, n: int, markers: str, snapshots: int) -> tuple[
    ClusterSpec, Nodes, list[str]
]:  # fmt: skip
    spec = cluster(kind, n, seed, markers)
    nodes = Nodes(spec)
    rng = random.Random(seed)
    steps = rng.sample(range(200), snapshots)
    starts = {step: (rng.choice(spec.ids), f"s{k}") for k, step in enumerate(sorted(steps))}
    nodes.run(rng, 240, starts)
    return spec, nodes, [sid for _, sid in sorted(starts.values(), key=lambda s: s[1])]


def recorded(check: Any) -> tuple[Any, ...]:
    return (check.ok, check.same_as_engine, check.recorded_total, check.differences)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["complete", "ring", "random"]),
    n=st.integers(2, 4),
    markers=st.sampled_from(["in-band", "out-of-band"]),
    snapshots=st.integers(2, 5),
    segment_lines=st.integers(1, 12),
)
def test_a_snapshot_registered_when_the_base_moved_checks_as_from_the_whole_logs(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    kind: str,
    n: int,
    markers: str,
    snapshots: int,
    segment_lines: int,
) -> None:
    spec, nodes, ids = simulated_run(seed, kind, n, markers, snapshots)
    folder = tmp_path_factory.mktemp("logs")
    write_logs(folder, nodes, segment_lines)
    whole = replay_logs(spec, folder, None)
    parts = {sid: {p: nodes.part(p, sid) for p in spec.ids} for sid in ids}
    expected = {sid: recorded(check_live_snapshot(spec, parts[sid], whole, sid)) for sid in ids}
    if markers == "in-band":  # out of band a transfer may overtake a marker: a wrong one
        assert all(e[0] for e in expected.values()), "every snapshot of the run is right"
    files_before = len(list(folder.iterdir()))

    # as retention does: the oldest snapshots go, one at a time; the base follows
    for dropped in range(1, len(ids)):
        registered = ids[dropped:]
        base = rebase(spec, folder, lambda kept=registered: kept) or load_base(spec, folder)
        if base is None:
            continue  # a registered snapshot began at every node's first action
        assert not base.start.closed & set(registered)
        # money is where the engine says: in the nodes or in flight
        in_flight = sum(a for ms in base.start.in_flight.values() for _, a in ms)
        assert sum(base.start.balances.values()) + in_flight == 100 * n
        from_base = replay_logs(spec, folder, load_base(spec, folder))
        for sid in registered:
            check = check_live_snapshot(spec, parts[sid], from_base, sid)
            assert recorded(check) == expected[sid], sid

    final = load_base(spec, folder)
    if final is not None:
        # a snapshot stays closed only while a marker of it is still to arrive after
        # the base: else none of its actions could follow, and it need not be named
        for sid, channels in final.awaited.items():
            for name in channels:
                dst = name.split("->")[1]
                arrived = [
                    line["i"]
                    for line in nodes.logs[dst]
                    if line["kind"] == "marker" and line["snapshot"] == sid and line["ch"] == name
                ]
                assert not arrived or arrived[0] >= final.upto[dst], (sid, name)
    if final is not None and any(final.upto[p] >= 2 * segment_lines for p in spec.ids):
        assert len(list(folder.iterdir())) < files_before + 1, "segments before it went"


def test_the_segments_wholly_before_the_base_are_deleted_and_the_newest_stays(
    tmp_path: Path,
) -> None:
    spec, nodes, ids = simulated_run(3, "complete", 3, "in-band", 3)
    write_logs(tmp_path, nodes, segment_lines=5)
    base = rebase(spec, tmp_path, lambda: ids[-1:])
    assert base is not None and not base.start.closed & set(ids[-1:])
    for node in spec.ids:
        firsts = sorted(int(p.name.split(".")[1]) for p in tmp_path.glob(f"{node}.*.jsonl*"))
        # the first segment left holds the base, or the base is where it begins
        assert firsts[0] <= base.upto[node] < firsts[0] + 5 or firsts == [max(firsts)]
        assert firsts[-1] // 5 == (len(nodes.logs[node]) - 1) // 5, "the newest stays"
    # moving it again with the same snapshots registered changes nothing
    assert rebase(spec, tmp_path, lambda: ids[-1:]) is None


def test_a_registered_snapshot_holds_the_base_before_its_first_action(tmp_path: Path) -> None:
    spec, nodes, ids = simulated_run(5, "ring", 3, "in-band", 2)
    write_logs(tmp_path, nodes, segment_lines=4)
    base = rebase(spec, tmp_path, lambda: ids)
    first_event = {
        node: min(
            (k for k, line in enumerate(lines) if line.get("snapshot") in ids),
            default=len(lines),
        )
        for node, lines in nodes.logs.items()
    }
    if base is not None:
        assert all(base.upto[p] <= first_event[p] for p in spec.ids)
        assert not base.start.closed


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda b: b.update(upto={"P1": 1}), "upto: one entry per node"),
        (lambda b: b["balances"].update(P1=-4), "balances: whole numbers"),
        (lambda b: b["in_flight"].update({"P9->P1": [["x", 1]]}), "in_flight: no channel"),
        (lambda b: b.update(in_flight=[]), "in_flight: an object"),
        (lambda b: b["in_flight"].update({"P1->P2": [["x", -1]]}), "amount at least 0"),
        (lambda b: b["in_flight"].update({"P1->P2": 3}), "pairs expected"),
        (lambda b: b["in_flight"].update({"P1->P2": [["x", 1, 2]]}), "pairs expected"),
        (lambda b: b.update(closed=["s1"]), "closed: an object from snapshot id"),
        (lambda b: b.update(closed={"s1": ["P9->P1"]}), "closed: an object from snapshot id"),
        (lambda b: b.pop("closed"), "closed: missing"),
        (lambda b: b["balances"].update(P1=b["balances"]["P1"] + 1), "they hold 301, the"),
    ],
)
def test_a_base_that_is_not_one_of_these_logs_is_refused_naming_the_field(
    tmp_path: Path, change: Any, field: str
) -> None:
    spec, nodes, ids = simulated_run(7, "complete", 3, "in-band", 2)
    write_logs(tmp_path, nodes, segment_lines=6)
    assert rebase(spec, tmp_path, lambda: ids[-1:]) is not None
    path = tmp_path / BASE_FILE
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(RunLogError, match=f"{BASE_FILE}: not a base of this cluster's logs: ") as e:
        load_base(spec, tmp_path)
    assert field in str(e.value)
    path.write_text("[]")
    with pytest.raises(RunLogError, match="not a base of this cluster's logs: an object"):
        load_base(spec, tmp_path)
    path.write_text("{")
    with pytest.raises(RunLogError, match=f"{BASE_FILE}: cannot be read"):
        load_base(spec, tmp_path)


def test_a_check_that_needs_actions_before_the_base_says_they_were_pruned(
    tmp_path: Path,
) -> None:
    spec, nodes, ids = simulated_run(11, "complete", 3, "in-band", 3)
    write_logs(tmp_path, nodes, segment_lines=5)
    base = rebase(spec, tmp_path, lambda: ids[-1:])
    assert base is not None
    node = max(spec.ids, key=lambda p: base.upto[p])
    upto = {p: base.upto[p] for p in spec.ids} | {node: base.upto[node] - 1}
    with pytest.raises(RunLogError, match=f"{node}'s actions before .* were pruned"):
        replay_logs(spec, tmp_path, base, upto)


def test_a_restore_s_logs_are_based_only_when_every_node_began_with_its_restore(
    tmp_path: Path,
) -> None:
    spec, nodes, ids = simulated_run(13, "complete", 3, "in-band", 2)
    write_logs(tmp_path, nodes, segment_lines=6)
    with pytest.raises(RunLogError, match="P1's log does not begin with its restore"):
        rebase(spec, tmp_path, lambda: ids[-1:], restored=True)
    assert not (tmp_path / BASE_FILE).exists()


def test_a_log_begun_anew_in_its_folder_takes_the_base_with_the_old_segments(
    tmp_path: Path,
) -> None:
    spec, nodes, ids = simulated_run(17, "complete", 3, "in-band", 2)
    write_logs(tmp_path, nodes, segment_lines=6)
    assert rebase(spec, tmp_path, lambda: ids[-1:]) is not None
    ActionLog(tmp_path, "P2").close()  # P2 switched to this epoch again, after a restart
    assert not (tmp_path / BASE_FILE).exists()
    assert not list(tmp_path.glob("P2.*.gz"))


def test_the_pruning_moves_each_readable_folder_s_base_and_names_the_unreadable_one(
    tmp_path: Path,
) -> None:
    pytest.importorskip("sqlalchemy", reason="the registry needs the live extra")
    from snapshotlib.live.registry import Registry
    from snapshotlib.live.retention import Pruned, prune_logs

    registry = Registry(f"sqlite:///{tmp_path / 'registry.db'}")
    spec, nodes, _ = simulated_run(19, "complete", 3, "in-band", 2)
    run = tmp_path / "logs" / "run-001"
    write_logs(run, nodes, segment_lines=5)
    done = Pruned()
    prune_logs(spec, registry, run, done)  # no snapshot registered: all of it is behind
    assert done.log_folders == ["run-001"] and not done.errors
    base = load_base(spec, run)
    assert base is not None and base.upto == {p: len(nodes.logs[p]) for p in spec.ids}
    # a line that is not a log's: said, with the file, and the folder left as it was
    newest = max(run.glob("P2.*.jsonl"))
    newest.write_text(newest.read_text() + "{not json\n")
    done = Pruned()
    prune_logs(spec, registry, run, done)
    assert not done.log_folders and load_base(spec, run) == base
    assert len(done.errors) == 1 and f"logs {run}: {newest}" in done.errors[0]
