"""The dataflow views and the dataflow explorer, read as what a learner sees.

The graph figure (:mod:`snapshotlib.viz.dataflow`) is checked trace by trace against
the job it draws: the blocked edges against ``sim.blocked``, the barriers and records
against the channels' queues (how many, and in which order along the channel), the
colours against the checkpoint records, the cross against ``job.crashed``. The
registry (:mod:`snapshotlib.viz.checkpoints`) is checked against the coordinator's
rows. The explorer is driven headlessly by clicking its buttons (``Button.click()``
runs the handlers a browser click would), and its figures are read from its
``FigureWidget`` s, which must be updated in place.
"""

from __future__ import annotations

import html
import importlib.util
import itertools
import json
import math
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from support import figure_states, opened_states

from snapshotlib.text_colours import WRONG

try:
    import ipywidgets as w
    import plotly.graph_objects as go
    import plotly.io as pio

    from snapshotlib.algorithms.barriers import back_edges
    from snapshotlib.dataflow import VARIANTS, StreamJob, iteration, random_dag, word_count
    from snapshotlib.trace import APP
    from snapshotlib.viz import checkpoints as checkpoints_module
    from snapshotlib.viz import dataflow as dataflow_module
    from snapshotlib.viz import (
        dataflow_figure,
        dataflow_layout,
        dataflow_spec,
        registry_figure,
        registry_spec,
        style,
        update_in_place,
    )
    from snapshotlib.viz.checkpoints import STATUS_COLOURS, STATUS_FILLS
    from snapshotlib.viz.dataflow import checkpoint_colour, shown_checkpoint
    from snapshotlib.widgets import DataflowExplorer
except ImportError:
    # the widgets extra is optional; CI installs it, so there it must be present
    _missing = [
        m
        for m in ("plotly", "networkx", "ipywidgets", "anywidget")
        if importlib.util.find_spec(m) is None
    ]
    if not _missing or os.environ.get("CI"):
        raise
    pytest.skip(f"needs {', '.join(_missing)} (the widgets extra)", allow_module_level=True)


WHITE, RED = style.WHITE_FILL, style.RED_FILL


# ---------------------------------------------------------------- helpers


def job_of(variant: str = "aligned", seed: int = 0, records: int = 20, **kw: Any) -> StreamJob:
    return StreamJob(word_count(records=records), variant, seed=seed, interval=15, **kw)


def plain(fig: go.Figure | Any) -> dict[str, Any]:
    """A figure as the browser receives it (JSON), without the template, trace uids and
    empty containers (which plotly's validation drops)."""

    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            return {
                k: clean(v)
                for k, v in x.items()
                if k not in ("template", "uid") and not (isinstance(v, list | dict) and not v)
            }
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return clean(json.loads(pio.to_json(fig, validate=False)))  # type: ignore[no-any-return]


def traces(fig: go.Figure | dict[str, Any], names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The traces by name, after checking they are exactly ``names``, in order."""
    data = fig["data"] if isinstance(fig, dict) else fig.to_dict()["data"]
    assert [t.get("name") for t in data] == list(names)
    return {t["name"]: t for t in data}


def graph(job: StreamJob, checkpoint: str | None = None) -> dict[str, dict[str, Any]]:
    return traces(dataflow_spec(job, checkpoint), dataflow_module.TRACES)


def polylines(trace: dict[str, Any]) -> list[list[tuple[float, float]]]:
    """The pieces of a line trace, split at its ``None`` gaps."""
    out: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    for x, y in zip(trace.get("x") or (), trace.get("y") or (), strict=True):
        if x is None or y is None:
            if current:
                out.append(current)
            current = []
        else:
            current.append((float(x), float(y)))
    if current:
        out.append(current)
    return out


def per_point(value: Any, n: int) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value] * n


def channel_paths(job: StreamJob) -> dict[str, list[tuple[float, float]]]:
    """Each channel's drawn polyline, by name (the channels trace, in network order)."""
    pieces = polylines(graph(job)["channels"])
    names = [str(c) for c in job.network.channels]
    assert len(pieces) == len(names)
    return dict(zip(names, pieces, strict=True))


def distance_to_end(path: list[tuple[float, float]], p: tuple[float, float]) -> float:
    """How far along ``path`` (from its receiving end) the point nearest ``p`` lies;
    fails if ``p`` is off the path."""
    best = (math.inf, 0.0)
    walked = 0.0
    for (x0, y0), (x1, y1) in reversed(list(itertools.pairwise(path))):
        dx, dy = x0 - x1, y0 - y1
        length = math.hypot(dx, dy)
        t = max(0.0, min(1.0, ((p[0] - x1) * dx + (p[1] - y1) * dy) / (length * length)))
        off = math.hypot(x1 + t * dx - p[0], y1 + t * dy - p[1])
        best = min(best, (off, walked + t * length))
        walked += length
    assert best[0] < 1e-6, f"{p} is not on the channel"
    return best[1]


def queued(trace: dict[str, Any]) -> list[tuple[str, int, tuple[float, float]]]:
    """``(channel, position from the head, point)`` of each record or barrier drawn."""
    out = []
    for x, y, text in zip(trace["x"], trace["y"], trace["hovertext"], strict=True):
        found = re.search(r"on (\S+) \((\d+) of \d+ from the head\)", text)
        assert found, text
        out.append((found.group(1), int(found.group(2)) - 1, (float(x), float(y))))
    return out


def steps_of(job: StreamJob, limit: int = 400) -> Iterator[StreamJob]:
    """The job after each of its steps (the same object, moved on)."""
    for _ in range(limit):
        if job.step() is None:
            return
        yield job


def until(job: StreamJob, condition: Any, limit: int = 400) -> StreamJob:
    for _ in steps_of(job, limit):
        if condition(job):
            return job
    raise AssertionError("the condition never held")


def every_kind_of_job() -> Iterator[tuple[str, StreamJob]]:
    for variant in VARIANTS:
        yield f"word count, {variant}", job_of(variant, records=10)
        yield f"iteration, {variant}", StreamJob(iteration(records=8), variant, interval=6)
    yield "random dag", StreamJob(random_dag(3, sources=3, layers=3, width=3), interval=7)


# ---------------------------------------------------------------- the graph: every step


def test_every_dataflow_figure_is_valid_plotly_with_its_traces_in_order_at_every_step() -> None:
    for name, job in every_kind_of_job():
        crashed = False
        for k, _ in enumerate(steps_of(job, 150)):
            if k == 25 and not crashed:  # and a crash, a halted job, a restore
                job.crash(job.flow.operators[-2].name)
                crashed = True
                figures = [dataflow_figure(job), registry_figure(job)]
                job.restore()
            else:
                figures = [dataflow_figure(job), registry_figure(job)]
            if k % 20 and k != 25:  # validation is slow: a sample of the steps
                continue
            for fig, names in zip(
                figures, (dataflow_module.TRACES, checkpoints_module.TRACES), strict=True
            ):
                assert [t.name for t in fig.data] == list(names), f"{name}, step {k}"
                try:
                    validated = go.Figure(fig.to_dict())
                except (ValueError, TypeError) as e:
                    pytest.fail(f"{name}, step {k}: not valid plotly: {e}")
                # unvalidated in the browser: validation must change nothing
                assert plain(fig) == plain(validated), f"{name}, step {k}"


def test_the_spec_functions_describe_the_same_figures_as_the_figure_functions() -> None:
    job = job_of().run(max_steps=30)
    assert plain(dataflow_figure(job)) == plain(go.Figure(dataflow_spec(job)))
    assert plain(registry_figure(job)) == plain(go.Figure(registry_spec(job)))


def test_the_graph_takes_a_few_milliseconds_at_most_for_ten_operators() -> None:
    import time

    job = StreamJob(word_count(sources=3, counters=6, records=60), "aligned", interval=10)
    job.run(max_steps=80)
    assert len(job.network.processes) == 10
    dataflow_spec(job)  # the layout and the channel geometry, cached once
    start = time.perf_counter()
    for _ in range(20):
        dataflow_spec(job)
        registry_spec(job)
    assert (time.perf_counter() - start) / 20 < 0.05  # generous: shared CI machines


# ---------------------------------------------------------------- layout


def test_layout_puts_sources_left_sinks_right_and_each_operator_after_its_inputs() -> None:
    for flow in (word_count(sources=3, counters=2), iteration(), random_dag(5, layers=3)):
        pos = dataflow_layout(flow)
        xs = {p: x for p, (x, _) in pos.items()}
        assert {xs[s] for s in flow.sources} == {min(xs.values())}
        assert {xs[s] for s in flow.sinks} == {max(xs.values())}
        net = flow.network()
        back = back_edges(net)
        for i, c in enumerate(net.channels):
            if i not in back:
                assert xs[c.src] < xs[c.dst], f"{c} does not go left to right"
        assert len(set(pos.values())) == len(pos), "two operators in one place"
        assert dataflow_layout(flow) == pos


def test_the_back_edge_of_an_iteration_is_an_arc_above_the_graph_the_rest_straight() -> None:
    job = StreamJob(iteration(), "aligned")
    paths = channel_paths(job)
    pos = dataflow_layout(job.flow)
    top = max(y for _, y in pos.values())
    arc = paths["L->H"]
    assert max(y for _, y in arc) > top + 0.2
    assert arc[0][0] > arc[-1][0], "the back edge runs right to left"
    for name in ("S->H", "H->L", "L->K"):
        (x0, y0), (x1, y1) = paths[name][0], paths[name][-1]
        assert all(
            abs((x - x0) * (y1 - y0) - (y - y0) * (x1 - x0)) < 1e-9 for x, y in paths[name]
        ), f"{name} is straight"


def test_every_channel_ends_in_an_arrow_head_at_its_receiver() -> None:
    job = job_of()
    ch = graph(job)["channels"]
    sizes = per_point(ch["marker"]["size"], len(ch["x"]))
    pos = dataflow_layout(job.flow)
    heads = [(x, y) for x, y, s in zip(ch["x"], ch["y"], sizes, strict=True) if s]
    assert len(heads) == len(job.network.channels)
    for (x, y), c in zip(heads, job.network.channels, strict=True):
        dst, src = pos[c.dst], pos[c.src]
        assert math.dist((x, y), dst) < math.dist((x, y), src)


# ---------------------------------------------------------------- what is in flight


def test_barrier_and_record_markers_are_the_queues_of_every_channel_in_order() -> None:
    for name, job in every_kind_of_job():
        for k, _ in enumerate(steps_of(job, 120)):
            sim = job.sim
            g = graph(job)
            paths = channel_paths(job)
            drawn = {
                "barrier": queued(g["barriers"]),
                "record": queued(g["records"]),
            }
            expected = {"barrier": 0, "record": 0}
            for i, queue in enumerate(sim.queues):
                kinds = [
                    "record" if sim.trace.messages[m].kind == APP else "barrier" for m in queue
                ]
                for what in expected:
                    expected[what] += kinds.count(what)
                channel = str(job.network.channels[i])
                here = sorted(
                    (pos, what, point)
                    for what, items in drawn.items()
                    for ch, pos, point in items
                    if ch == channel
                )
                assert [what for _, what, _ in here] == kinds, f"{name}, step {k}, {channel}"
                # the head nearest the receiver, the rest behind it in queue order
                gaps = [distance_to_end(paths[channel], point) for _, _, point in here]
                assert gaps == sorted(gaps) and len(set(gaps)) == len(gaps)
            assert len(drawn["barrier"]) == expected["barrier"], f"{name}, step {k}"
            assert len(drawn["record"]) == expected["record"], f"{name}, step {k}"


def test_barriers_are_labelled_and_coloured_by_their_checkpoint() -> None:
    job = until(job_of(), lambda j: len(j.coordinator.entries) >= 2 and _barriers(j) >= 2)
    b = graph(job)["barriers"]
    tags = [
        job.sim.trace.messages[m].tag
        for q in job.sim.queues
        for m in q
        if job.sim.trace.messages[m].kind != APP
    ]
    assert sorted(b["text"]) == sorted(tags)
    colours = per_point(b["marker"]["color"], len(b["text"]))
    for tag, colour in zip(b["text"], colours, strict=True):
        assert colour == checkpoint_colour(tag)
    assert checkpoint_colour("c1") != checkpoint_colour("c2")
    assert not {checkpoint_colour(f"c{k}") for k in range(1, 7)} & {WHITE, RED}


def _barriers(job: StreamJob) -> int:
    messages = job.sim.trace.messages
    return sum(messages[m].kind != APP for q in job.sim.queues for m in q)


def test_the_number_beside_each_busy_channel_counts_its_records_in_flight() -> None:
    job = job_of().run(max_steps=20)
    counts = graph(job)["counts"]
    expected = sorted(
        str(sum(job.sim.trace.messages[m].kind == APP for m in q))
        for q in job.sim.queues
        if any(job.sim.trace.messages[m].kind == APP for m in q)
    )
    assert sorted(counts["text"]) == expected and expected


def test_records_sent_after_their_sender_recorded_are_red_the_others_white() -> None:
    job = until(job_of(), lambda j: j.sim.blocked and j.steps > 20)
    cid = shown_checkpoint(job)
    assert cid is not None
    rec = job.sim.algorithm.records[cid]
    r = graph(job)["records"]
    fills = per_point(r["marker"]["color"], len(r["x"]))
    by_name = {}
    for q in job.sim.queues:
        for m in q:
            msg = job.sim.trace.messages[m]
            if msg.kind == APP:
                sender = job.network.channels[msg.channel].src
                turned = rec.red_from.get(sender)
                by_name[f"{msg.payload.origin[0]}#{msg.payload.origin[1]}"] = (
                    turned is not None and msg.sent_by >= turned
                )
    seen = set()
    for text, fill in zip(r["hovertext"], fills, strict=True):
        name = text.split()[1]
        seen.add(by_name[name])
        assert fill == (RED if by_name[name] else WHITE), text
    assert seen == {True, False}, "both kinds shown in this state"


# ---------------------------------------------------------------- blocked inputs


def test_an_aligned_job_blocking_a_channel_draws_exactly_that_channel_blocked() -> None:
    job = until(job_of(), lambda j: bool(j.sim.blocked))
    g = graph(job)
    names = [str(job.network.channels[i]) for i in sorted(job.sim.blocked)]
    pieces = polylines(g["blocked"])
    paths = channel_paths(job)
    assert pieces == [paths[n] for n in names]
    labels = [t for t in g["blocked"]["text"] if t]
    assert labels == [f"blocked ({shown_checkpoint(job)})"] * len(names)
    assert g["blocked"]["line"]["dash"] == "dash"
    hover = {t for t in g["blocked"]["hovertext"] if t}
    assert hover == {f"<b>{n}</b> blocked (barrier c1 arrived)" for n in names}
    # and the operator waiting says which of its inputs is held back
    waiting = job.network.channels[min(job.sim.blocked)].dst
    ops = g["operators"]
    assert f"blocked input: {names[0]}" in ops["hovertext"][ops["text"].index(waiting)]


def test_the_blocked_trace_follows_alignment_step_by_step_and_empties_when_it_is_done() -> None:
    job = job_of()
    seen = 0
    for _ in steps_of(job):
        names = {str(job.network.channels[i]) for i in job.sim.blocked}
        hover = {t.split("</b>")[0][3:] for t in graph(job)["blocked"]["hovertext"] if t}
        assert hover == names
        seen += bool(names)
    assert seen > 0
    assert polylines(graph(job)["blocked"]) == []


def test_unaligned_and_at_least_once_jobs_never_draw_a_blocked_channel() -> None:
    for variant in ("unaligned", "at-least-once", "chandy-lamport"):
        job = job_of(variant)
        for _ in steps_of(job):
            assert graph(job)["blocked"]["x"] == []


def test_channels_whose_state_is_being_logged_are_highlighted() -> None:
    # an aligned iteration logs its back edge from H's snapshot until the barrier returns
    job = StreamJob(iteration(), "aligned", interval=5)
    highlighted = 0
    for _ in steps_of(job, 200):
        cid = shown_checkpoint(job)
        rec = job.sim.algorithm.records.get(cid) if cid else None
        logging = sorted(set(rec.channels) - rec.closed) if rec else []
        paths = channel_paths(job)
        expected = [paths[str(job.network.channels[i])] for i in logging]
        assert polylines(graph(job)["recording"]) == expected
        highlighted += bool(logging)
    assert highlighted > 0


# ---------------------------------------------------------------- operators


def test_operators_are_red_exactly_when_they_recorded_the_newest_pending_checkpoint() -> None:
    job = job_of()
    for _ in steps_of(job):
        cid = shown_checkpoint(job)
        pending = [e.id for e in job.coordinator.pending()]
        if pending:
            assert cid == pending[-1]
        ops = graph(job)["operators"]
        rec = job.sim.algorithm.records.get(cid) if cid else None
        expected = [
            RED if rec is not None and p in rec.red_from else WHITE for p in job.network.processes
        ]
        assert ops["marker"]["color"] == expected
        assert ops["marker"]["symbol"] == [
            style.RED_SYMBOL if c == RED else style.WHITE_SYMBOL for c in expected
        ]


def test_a_chosen_checkpoint_colours_the_graph_instead_of_the_newest() -> None:
    job = until(job_of(), lambda j: completed_and_pending(j, "c1"))
    first = graph(job, "c1")["operators"]["marker"]["color"]
    assert first == [RED] * len(job.network.processes)  # every operator recorded c1
    assert shown_checkpoint(job) != "c1"  # a newer one is in progress
    assert graph(job)["operators"]["marker"]["color"] != first


def test_operators_show_their_kind_and_state_offset_counts_and_sink_outputs() -> None:
    job = job_of().run(max_steps=40)
    states = dict(zip(job.network.processes, graph(job)["states"]["text"], strict=True))
    sim = job.sim
    assert states["S1"] == f"source<br>offset {sim.states['S1']}/20"
    counts = dict(sim.states["C2"])
    shown = states["C2"].split("<br>")[1].split()
    assert states["C2"].startswith("count<br>")
    for item in shown:
        if item.startswith("+"):
            assert int(item[1:]) == len(counts) - 3
        else:
            key, n = item.split(":")
            assert counts[key] == int(n)
    assert states["K"] == f"sink<br>{len(sim.states['K'])} outputs"
    hover = graph(job)["operators"]["hovertext"][0]
    assert "<b>S1</b> (source)" in hover and f"now: {sim.states['S1']}" in hover


def test_a_stateless_operator_says_so() -> None:
    job = StreamJob(iteration(), "aligned")
    states = dict(zip(job.network.processes, graph(job)["states"]["text"], strict=True))
    assert states["L"] == "loop<br>stateless"
    assert states["H"] == "count<br>no counts yet"


# ---------------------------------------------------------------- crash and restore


def test_a_crashed_operator_is_crossed_out_until_the_restore() -> None:
    job = job_of().run(max_steps=30)
    assert graph(job)["crashed"]["x"] == []
    job.crash("C1")
    g = graph(job)
    pos = dataflow_layout(job.flow)
    assert list(zip(g["crashed"]["x"], g["crashed"]["y"], strict=True)) == [pos["C1"]]
    assert g["crashed"]["text"] == ["crashed"]
    assert "halted: C1 crashed" in dataflow_spec(job)["layout"]["title"]["text"]
    job.restore()
    assert graph(job)["crashed"]["x"] == []
    assert "halted" not in dataflow_spec(job)["layout"]["title"]["text"]


def test_barriers_of_a_failed_checkpoint_still_in_flight_are_grey() -> None:
    # a time-to-live fails a slow checkpoint; its barriers are ignored when they arrive
    job = StreamJob(word_count(records=30), "aligned", seed=0, interval=10, ttl=3)
    found = False
    for _ in steps_of(job):
        b = graph(job)["barriers"]
        failed = {e.id for e in job.coordinator.entries.values() if e.status == "FAILED"}
        colours = per_point(b["marker"]["color"], len(b["text"]))
        for tag, colour in zip(b["text"], colours, strict=True):
            stale = tag in failed
            found |= stale
            assert (colour == dataflow_module.STALE) == stale
    assert found


# ---------------------------------------------------------------- the registry


def registry(job: StreamJob) -> dict[str, dict[str, Any]]:
    return traces(registry_spec(job), checkpoints_module.TRACES)


def completed_and_pending(job: StreamJob, checkpoint: str) -> bool:
    """``checkpoint`` has COMPLETED (in this run of the job) and a later one is pending."""
    entry = job.coordinator.entries.get(checkpoint)
    return (
        entry is not None
        and entry.status == "COMPLETED"
        and checkpoint in job.sim.algorithm.records
        and bool(job.coordinator.pending())
    )


def crashed_and_restored() -> StreamJob:
    """C1 crashed while c1 was COMPLETED and a later checkpoint pending; restored."""
    job = until(job_of(records=30), lambda j: completed_and_pending(j, "c1"))
    job.crash("C1")
    job.restore()
    return job.run(max_steps=50)


def test_registry_table_rows_match_the_coordinator_rows() -> None:
    job = crashed_and_restored()
    rows = job.coordinator.rows()
    assert {r["status"] for r in rows} >= {"COMPLETED", "FAILED"}
    cells = registry(job)["table"]["cells"]["values"]
    n = len(job.network.processes)
    assert cells[0] == [r["snapshot_id"] for r in rows]
    assert cells[1] == [r["status"] for r in rows]
    assert cells[2] == [r["triggered_at"] for r in rows]
    assert cells[3] == ["" if r["ended_at"] is None else r["ended_at"] for r in rows]
    assert cells[4] == ["" if r["duration"] is None else r["duration"] for r in rows]
    assert cells[5] == [f"{r['nodes_completed']}/{n}" for r in rows]
    assert cells[6] == [r["total_size_bytes"] for r in rows]
    assert cells[7] == [r["reason"] for r in rows]
    fills = registry(job)["table"]["cells"]["fill"]["color"]
    assert all(col == [STATUS_FILLS[r["status"]] for r in rows] for col in fills)


def test_registry_timeline_has_a_bar_per_checkpoint_in_its_status_colour() -> None:
    job = crashed_and_restored()
    job.trigger()
    reg = registry(job)
    rows = job.coordinator.rows()
    for status in ("INITIATED", "COMPLETED", "FAILED"):
        bars = polylines(reg[status.lower()])
        expected = [
            [
                (r["triggered_at"], k),
                (r["ended_at"] if r["ended_at"] is not None else job.steps, k),
            ]
            for k, r in enumerate(rows)
            if r["status"] == status
        ]
        assert bars == expected, status
        assert bars, f"no {status} checkpoint in this run"
        assert reg[status.lower()]["line"]["color"] == STATUS_COLOURS[status]


def test_registry_timeline_marks_the_crash_and_the_restore_and_now() -> None:
    job = crashed_and_restored()
    reg = registry(job)
    step = job.restores[0]["step"]
    assert reg["events"]["hovertext"] == [
        f"step {step}: C1 crashed",
        f"step {step}: restored from c1",
    ]
    assert reg["events"]["marker"]["symbol"] == ["x", "triangle-right"]
    assert set(reg["now"]["x"]) == {job.steps}


def test_the_registry_of_a_fresh_job_is_empty_but_drawn() -> None:
    reg = registry(job_of())
    assert reg["table"]["cells"]["values"][0] == []
    assert all(reg[s]["x"] == [] for s in ("initiated", "completed", "failed"))


# ---------------------------------------------------------------- update in place


def test_update_in_place_follows_a_job_through_a_crash_and_a_restore() -> None:
    job = job_of(records=8)
    views = [
        (go.FigureWidget(dataflow_figure(job)), dataflow_spec),
        (go.FigureWidget(registry_figure(job)), registry_spec),
    ]
    kept = [list(v.data) for v, _ in views]

    def check() -> None:
        for (view, spec), traces_before in zip(views, kept, strict=True):
            new = spec(job)
            update_in_place(view, new)
            assert plain(view) == plain(go.Figure(new)), f"step {job.steps}"
            assert all(a is b for a, b in zip(view.data, traces_before, strict=True))

    for k, _ in enumerate(steps_of(job)):
        if k == 20:
            job.crash("C2")
            check()
            job.restore()
        check()


# =================================================================== the explorer


def walk(widget: w.Widget) -> Iterator[w.Widget]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def status(ex: DataflowExplorer) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", ex.status.value))


def is_error(ex: DataflowExplorer) -> bool:
    return WRONG in ex.status.value


def on_screen(ex: DataflowExplorer, name: str) -> Any:
    t = ex.graph_view.data[dataflow_module.TRACES.index(name)]
    assert t.name == name
    return t


def explorer(variant: str = "aligned", records: int = 20, seed: int = 0) -> DataflowExplorer:
    return DataflowExplorer(job_of(variant, seed=seed, records=records))


def test_the_explorer_has_the_buttons_the_issue_asks_for_each_with_a_tooltip() -> None:
    ex = explorer()
    found = {b.description: b for b in walk(ex.widget) if isinstance(b, w.Button)}
    for name in ("Step", "Run", "Run to end", "Trigger checkpoint", "Crash", "Restore", "Reset"):
        assert name in found, name
        assert found[name].tooltip
    assert list(ex.crash_choice.options) == list(ex.job.network.processes)
    assert ex.crash_choice.value == "C1"  # the first stateful operator
    assert ex.button("Step") is found["Step"]
    with pytest.raises(KeyError):
        ex.button("Fly")


def test_step_button_takes_one_step_of_the_job_and_says_what_it_was() -> None:
    ex = explorer()
    twin = job_of()
    for _ in range(5):
        ex.button("Step").click()
        action = twin.step()
        assert ex.job.steps == twin.steps
        assert ex.job.sim.states == twin.sim.states
        assert status(ex).startswith(f"step {ex.job.steps}: ")
        assert action is not None
        if "read" in str(action):
            assert f"{action.process} read " in status(ex)  # type: ignore[attr-defined]


def test_the_status_says_when_a_barrier_blocks_a_channel_and_when_alignment_ends() -> None:
    ex = explorer()
    said = []
    while ex.step_once():
        said.append(status(ex))
    blocked = [s for s in said if " blocked " in s]
    assert blocked and re.search(r"C\d blocked S\d->C\d \(barrier c1 arrived\)", blocked[0])
    assert any(re.search(r"C\d recorded its state for c1; unblocked S\d->C\d", s) for s in said)
    assert any("checkpoint c1 triggered: barriers at S1, S2" in s for s in said)
    assert any("c1 COMPLETED" in s for s in said)
    assert "nothing left to do" in status(ex) and not is_error(ex)


def test_run_takes_the_steps_in_its_box_and_run_to_end_finishes_the_job() -> None:
    ex = explorer()
    ex.run_steps.value = 12
    ex.button("Run").click()
    assert ex.job.steps == 12
    assert status(ex).startswith("ran 12 steps (now step 12)")
    ex.button("Run to end").click()
    assert ex.job.actions() == []
    assert ex.job.outcome() == job_of().run().outcome()
    assert "the job has finished" in status(ex)
    assert ex.run(5) == 0 and "nothing left to do" in status(ex)


def test_run_reports_the_checkpoints_triggered_and_completed_meanwhile() -> None:
    ended = job_of().run().coordinator.entry("c1").ended_at  # the same job, run alone
    assert ended is not None
    ex = explorer()
    assert ex.run(ended) == ended
    triggered = ", ".join(ex.job.coordinator.entries)
    assert f"triggered {triggered}" in status(ex) and "COMPLETED c1" in status(ex)


def test_trigger_button_starts_a_checkpoint_whose_barriers_appear_on_the_graph() -> None:
    ex = explorer()
    ex.run(3)
    ex.button("Trigger checkpoint").click()
    assert list(ex.job.coordinator.entries) == ["c1"]
    assert status(ex).startswith("checkpoint c1 triggered at step 3")
    barriers = on_screen(ex, "barriers")
    assert list(barriers.text) == ["c1"] * len(ex.job.network.outputs("S1")) * 2
    colours = on_screen(ex, "operators").marker.color
    assert list(colours) == [RED, RED, WHITE, WHITE, WHITE]  # the sources recorded


def test_crash_and_restore_buttons_halt_the_job_fail_its_checkpoint_and_roll_back() -> None:
    ex = explorer(records=30)
    while not completed_and_pending(ex.job, "c1"):
        assert ex.step_once()
    ex.crash_choice.value = "C2"
    ex.button("Crash").click()
    assert ex.job.crashed == "C2"
    failed = [r["snapshot_id"] for r in ex.job.coordinator.rows() if r["status"] == "FAILED"]
    assert failed and f"{failed[0]} FAILED: C2 crashed" in status(ex)
    assert "the job is halted until Restore" in status(ex)
    pos = ex.positions["C2"]
    assert list(zip(on_screen(ex, "crashed").x, on_screen(ex, "crashed").y, strict=True)) == [pos]
    table = ex.registry_view.data[-1].cells.values
    assert "FAILED" in table[1]
    assert ex.button("Restore").disabled is False and ex.button("Crash").disabled is True
    assert ex.button("Step").disabled is True

    ex.button("Restore").click()
    info = ex.job.restores[-1]
    assert info["from"] == "c1"
    n = info["replayed"]
    assert status(ex).startswith(f"restored from c1: {n} record{'s' if n != 1 else ''} replayed")
    assert ex.job.crashed is None and list(on_screen(ex, "crashed").x) == []
    assert ex.button("Restore").disabled is True and ex.button("Step").disabled is False
    ex.run()
    assert ex.job.outcome() == job_of(records=30).run().outcome()  # exactly once


def test_a_restore_with_no_completed_checkpoint_starts_over() -> None:
    ex = explorer()
    ex.run(5)
    ex.crash("K")
    ex.restore()
    assert status(ex).startswith("restored from the start (no checkpoint had COMPLETED)")
    assert "sources re-read from offsets S1 0, S2 0" in status(ex)


def test_an_at_least_once_restore_says_how_many_records_will_be_duplicated() -> None:
    for seed in range(10):
        ex = explorer("at-least-once", records=30, seed=seed)
        while not completed_and_pending(ex.job, "c1"):
            assert ex.step_once()
        ex.crash("C1")
        ex.restore()
        dup = len(ex.job.restores[-1]["predicted_duplicates"])
        if dup:
            assert f"{dup} record(s) will reach the sink twice" in status(ex)
            return
    pytest.fail("no seed duplicated a record")


def test_refused_actions_are_messages_in_the_status_line_never_tracebacks() -> None:
    ex = explorer()
    ex.run(10)
    assert ex.restore() is False and is_error(ex)
    assert "nothing to restore" in status(ex)
    assert ex.crash("X9") is False and is_error(ex)
    assert "no such operator" in status(ex)
    assert ex.crash("C1") is True and not is_error(ex)
    steps = ex.job.steps
    ex.button("Crash").click()  # crash while crashed (a click on a disabled button)
    assert is_error(ex) and "already halted (C1 crashed)" in status(ex)
    for refused in (ex.step_once, ex.run, ex.trigger):
        assert refused() in (False, 0, None)
        assert is_error(ex) and "press Restore first" in status(ex)
    assert ex.job.steps == steps and ex.job.crashed == "C1"
    assert ex.job.coordinator.entries == {}  # no checkpoint was triggered while halted


def test_figures_are_updated_in_place_never_re_created() -> None:
    ex = explorer()
    views = (ex.graph_view, ex.registry_view)
    kept = [list(v.data) for v in views]

    def same() -> None:
        assert (ex.graph_view, ex.registry_view) == views
        for v, before in zip(views, kept, strict=True):
            assert all(a is b for a, b in zip(v.data, before, strict=True))
            assert len(v.data) == len(before)
        shown = [x for x in walk(ex.widget) if isinstance(x, go.FigureWidget)]
        assert len(shown) == 2 and all(any(x is v for v in views) for x in shown)

    for name in ("Step", "Run", "Trigger checkpoint", "Crash", "Restore", "Run to end", "Reset"):
        ex.button(name).click()
        same()
    # and what is on screen is what the figure functions draw
    assert plain(ex.graph_view) == plain(dataflow_figure(ex.job, None, ex.positions))
    assert plain(ex.registry_view) == plain(registry_figure(ex.job))


def test_reset_starts_a_fresh_job_with_the_chosen_variant_and_seed() -> None:
    ex = explorer()
    ex.run(30)
    ex.variant.value = "unaligned"
    ex.seed.value = 4
    ex.button("Reset").click()
    assert ex.job.steps == 0 and ex.job.variant == "unaligned"
    assert ex.job.coordinator.entries == {}
    ex.run(25)
    twin = job_of("unaligned", seed=4).run(max_steps=25)
    assert ex.job.sim.states == twin.sim.states
    ex.reset("chandy-lamport", 1)
    assert ex.variant.value == "chandy-lamport" and ex.job.variant == "chandy-lamport"
    assert "a fresh chandy-lamport job, seed 1" in status(ex)


def test_the_same_seeded_job_tells_the_same_story() -> None:
    def story() -> list[str]:
        ex = explorer()
        out = []
        for _ in range(30):
            ex.step_once()
            out.append(status(ex))
        ex.crash("C1")
        out.append(status(ex))
        ex.restore()
        out.append(status(ex))
        return out

    assert story() == story()


def test_play_steps_on_each_tick_and_stops_when_the_job_is_done() -> None:
    ex = explorer(records=3)
    ex.play.playing = True
    for k in range(1, 200):
        ex.play.value = k
        if not ex.play.playing:
            break
    assert ex.job.actions() == [] and not ex.play.playing


def test_the_log_keeps_the_newest_lines_first() -> None:
    ex = explorer()
    for _ in range(12):
        ex.step_once()
    items = re.findall(r"<li>(.*?)</li>", ex.log.value)
    assert len(items) == 8
    assert html.unescape(items[0]) == status(ex)


def test_the_explorer_displays_as_a_widget_and_says_what_it_is_without_a_kernel() -> None:
    bundle = explorer()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "DataflowExplorer" in bundle["text/plain"]


def test_the_explorer_figures_open_in_the_browser_whole_with_their_classes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # what a browser that draws before any update arrives shows (see test_widgets.py)
    states = opened_states(monkeypatch)
    ex = explorer()
    opened = figure_states(states)
    assert [s["_dom_classes"] for s in opened] == [("dataflow-graph",), ("dataflow-registry",)]
    for state, view in zip(opened, (ex.graph_view, ex.registry_view), strict=True):
        assert len(state["_widget_data"]) == len(view.data) > 0


def test_the_explorer_accepts_a_job_that_has_already_run_and_shows_it_as_it_is() -> None:
    job = job_of().run(max_steps=25)
    ex = DataflowExplorer(job)
    assert ex.job is job
    assert plain(ex.graph_view) == plain(dataflow_figure(job, None, ex.positions))
    assert "Nothing yet" in ex.log.value


def test_the_explorer_runs_a_cyclic_job_through_a_crash() -> None:
    ex = DataflowExplorer(StreamJob(iteration(records=10), "aligned", interval=6))
    ex.run(30)
    ex.crash("H")
    ex.restore()
    ex.run()
    clean = StreamJob(iteration(records=10), "aligned", interval=6).run()
    assert ex.job.outcome() == clean.outcome()
