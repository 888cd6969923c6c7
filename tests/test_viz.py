"""The figures of snapshotlib.viz, read as data: what a learner sees, trace by trace.

Every figure is a pure function of the engine's state with a fixed list of traces
(``TRACES`` of its module), built without plotly's validation for speed; these tests
validate each kind of figure at every step of every example scenario, then check what
each trace shows against the engine: colours against :mod:`snapshotlib.colouring`,
arrows against the trace, cuts against the snapshot records, the commutation view
against :func:`snapshotlib.checks.commutation.arrangement`.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import plotly.graph_objects as go
    import plotly.io as pio

    from snapshotlib import Channel, Deliver, Internal, Network, Send, Simulator, StartSnapshot
    from snapshotlib.checks.commutation import arrangement, check_commutation
    from snapshotlib.checks.cut import cut_limits
    from snapshotlib.colouring import RED, colouring
    from snapshotlib.formats.scenario import load_scenario, run_scenario
    from snapshotlib.trace import APP, APP_KINDS, NOT_RECEIVED
    from snapshotlib.viz import commutation as commutation_module
    from snapshotlib.viz import (
        commutation_figure,
        commutation_spec,
        network_figure,
        network_layout,
        network_spec,
        spacetime_figure,
        spacetime_spec,
        style,
        update_in_place,
    )
    from snapshotlib.viz import network as network_module
    from snapshotlib.viz import spacetime as spacetime_module
except ImportError:
    # the viz extra is optional; CI installs it, so there it must be present
    _missing = [m for m in ("plotly", "networkx") if importlib.util.find_spec(m) is None]
    if not _missing or os.environ.get("CI"):
        raise
    pytest.skip(f"needs {', '.join(_missing)} (the viz extra)", allow_module_level=True)


ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "examples" / "scenarios").glob("*.json"))
WORKED = ROOT / "examples" / "scenarios" / "worked-example.json"
NON_FIFO = ROOT / "examples" / "scenarios" / "non-fifo-breaks.json"
CONCURRENT = ROOT / "examples" / "scenarios" / "concurrent-snapshots.json"


# ---------------------------------------------------------------- helpers


def runs(path: Path) -> Iterator[tuple[int, Simulator]]:
    """The scenario after each prefix of its steps: 0, 1, ..., all."""
    sc = load_scenario(path)
    for k in range(len(sc.steps) + 1):
        yield k, run_scenario(sc, until=k)


def choices(sim: Simulator) -> list[str | None]:
    """No snapshot chosen, then each snapshot started so far."""
    return [None, *sim.algorithm.records]


def plain(fig: go.Figure | Any) -> dict[str, Any]:
    """A figure as the browser receives it (JSON), without the template, the trace
    uids a FigureWidget adds, and empty containers (``[]``/``{}``, which plotly's
    validation drops)."""

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


def traces(fig: go.Figure, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The figure's traces by name, after checking they are exactly ``names``, in order."""
    data = fig.to_dict()["data"]
    assert [t.get("name") for t in data] == list(names)
    return {t["name"]: t for t in data}


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


def piece_texts(trace: dict[str, Any]) -> list[str]:
    """The hover text of each piece of a line trace (that of its first point)."""
    out = []
    starting = True
    for x, text in zip(trace["x"], trace["hovertext"], strict=True):
        if x is None:
            starting = True
        elif starting:
            out.append(text)
            starting = False
    return out


def points(trace: dict[str, Any]) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in zip(trace["x"], trace["y"], strict=True)]


def per_point(value: Any, n: int) -> list[Any]:
    """A marker property as one value per point (plotly allows a scalar for all)."""
    return list(value) if isinstance(value, list | tuple) else [value] * n


def along(segment: list[tuple[float, float]], p: tuple[float, float]) -> float:
    """Where ``p`` lies on the straight segment (0 = start, 1 = end); fails if it is off it."""
    (x0, y0), (x1, y1) = segment[0], segment[-1]
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    t = ((p[0] - x0) * dx + (p[1] - y0) * dy) / length2
    off = abs((p[0] - x0) * dy - (p[1] - y0) * dx) / math.sqrt(length2)
    assert off < 1e-6, f"{p} is not on the segment {segment[0]} -> {segment[-1]}"
    return t


def title(fig: go.Figure) -> str:
    return str(fig.to_dict()["layout"]["title"]["text"])


def inversions_in_title(fig: go.Figure) -> int:
    found = re.search(r"(\d+) inversion", title(fig))
    assert found, f"no inversion count in the title {title(fig)!r}"
    return int(found.group(1))


def every_figure(sim: Simulator) -> Iterator[tuple[str, go.Figure]]:
    """Every figure the viz package makes of ``sim``: each kind, each snapshot choice,
    every step of each commutation."""
    for sid in choices(sim):
        yield f"network {sid}", network_figure(sim, sid)
        yield f"space-time {sid}", spacetime_figure(sim, sid)
        if sid is None:
            continue
        result = check_commutation(sim, sid)
        col = colouring(sim, sid)
        for done in range(len(result.swaps or ()) + 1):
            yield f"commutation {sid} after {done}", commutation_figure(col, result, done)


def unlabelled_non_fifo_break() -> Simulator:
    """P1 records, then sends an unlabelled token that overtakes its marker to P2."""
    sim = Simulator(Network(["P1", "P2"], fifo=False), "tokens", {"P1": 2})
    sim.step(StartSnapshot("P1", "s1"))
    sim.step(Send("P1", "P2", 1))
    token = next(m for m in sim.in_flight("P1->P2") if sim.trace.messages[m].kind == APP)
    sim.step(Deliver(Channel("P1", "P2"), token))
    sim.run()
    return sim


# ------------------------------------------------------- every figure, every step


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_figure_has_its_documented_traces_in_order_at_every_step(path: Path) -> None:
    expected = {
        "network": network_module.TRACES,
        "space-time": spacetime_module.TRACES,
        "commutation": commutation_module.TRACES,
    }
    for k, sim in runs(path):
        for what, fig in every_figure(sim):
            names = [t.name for t in fig.data]
            assert names == list(expected[what.split()[0]]), f"step {k}, {what}"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_figure_is_valid_plotly_at_every_step(path: Path) -> None:
    for k, sim in runs(path):
        for what, fig in every_figure(sim):
            try:
                go.Figure(fig.to_dict())  # validates; raises on a misspelt property
            except (ValueError, TypeError) as e:
                pytest.fail(f"step {k}, {what}: not valid plotly: {e}")


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_figure_is_already_in_the_form_plotly_validation_would_give(path: Path) -> None:
    # The figures reach the browser unvalidated, so a shorthand that plotly.py would
    # expand (a title given as a bare string, which plotly.js 3+ no longer draws) must
    # not be used: validating must change nothing.
    for k, sim in runs(path):
        for what, fig in every_figure(sim):
            assert plain(fig) == plain(go.Figure(fig.to_dict())), f"step {k}, {what}"


def test_the_spec_functions_describe_the_same_figures_as_the_figure_functions() -> None:
    sim = run_scenario(load_scenario(WORKED), until=9)
    result = check_commutation(sim, "s1")
    col = colouring(sim, "s1")
    pairs = [
        (network_figure(sim, "s1"), network_spec(sim, "s1")),
        (spacetime_figure(sim, "s1"), spacetime_spec(sim, "s1")),
        (commutation_figure(col, result, 1), commutation_spec(col, result, 1)),
    ]
    for fig, spec in pairs:
        assert plain(fig) == plain(go.Figure(spec))


# ------------------------------------------------------------------- network


def test_network_layout_places_every_process_apart_and_is_deterministic() -> None:
    net = Network([f"P{i}" for i in range(6)])
    for kind in ("circular", "spring"):
        pos = network_layout(net, kind, seed=3)
        assert set(pos) == set(net.processes)
        coords = list(pos.values())
        assert len({(round(x, 6), round(y, 6)) for x, y in coords}) == len(coords)
        assert pos == network_layout(net, kind, seed=3)
    with pytest.raises(ValueError, match="unknown layout"):
        network_layout(net, "grid")


def test_network_circular_layout_puts_the_first_process_at_the_top() -> None:
    pos = network_layout(Network(["P1", "P2", "P3"], "ring"))
    assert pos["P1"][1] == pytest.approx(max(y for _, y in pos.values()))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_network_fills_processes_white_or_red_for_the_chosen_snapshot(path: Path) -> None:
    for k, sim in runs(path):
        for sid in choices(sim):
            t = traces(network_figure(sim, sid), network_module.TRACES)["processes"]
            assert list(t["text"]) == list(sim.network.processes)
            # red once recorded (the clock algorithm records between two actions, so a
            # process can be red before its first red action)
            recorded = sim.algorithm.records[sid].red_from if sid else {}
            reds = [p in recorded for p in sim.network.processes]
            n = len(reds)
            marker = t["marker"]
            where = f"step {k}, snapshot {sid}"
            assert per_point(marker["color"], n) == [style.fill(r) for r in reds], where
            assert per_point(marker["symbol"], n) == [style.symbol(r) for r in reds], where
            assert per_point(marker["line"]["width"], n) == [style.width(r) for r in reds]
            assert per_point(marker["line"]["color"], n) == [style.outline(r) for r in reds]


def test_red_differs_from_white_by_more_than_colour_for_greyscale_readers() -> None:
    assert style.fill(True) != style.fill(False)
    assert style.symbol(True) != style.symbol(False)
    assert style.width(True) > style.width(False)
    assert style.outline(True) != style.outline(False)


def test_network_draws_every_channel_as_an_arrow_pointing_at_its_receiver() -> None:
    sim = run_scenario(load_scenario(WORKED))
    pos = network_layout(sim.network)
    t = traces(network_figure(sim, "s1", pos), network_module.TRACES)["channels"]
    lines = polylines(t)
    assert len(lines) == len(sim.network.channels)
    sizes = [s for s, x in zip(t["marker"]["size"], t["x"], strict=True) if x is not None]
    heads = iter(sizes)
    for c, line in zip(sim.network.channels, lines, strict=True):
        start, end = line[0], line[-1]
        assert math.dist(end, pos[c.dst]) < math.dist(start, pos[c.dst])
        assert math.dist(start, pos[c.src]) < math.dist(end, pos[c.src])
        own = [next(heads) for _ in line]
        assert own[-1] > 0 and all(s == 0 for s in own[:-1]), f"{c}: one arrowhead, at the end"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_network_places_messages_and_markers_on_their_channel_head_nearest_receiver(
    path: Path,
) -> None:
    for k, sim in runs(path):
        sid = next(iter(sim.algorithm.records), None)
        tr = traces(network_figure(sim, sid), network_module.TRACES)
        segments = polylines(tr["channels"])
        msg_pts = iter(points(tr["messages"]))
        msg_hover = iter(tr["messages"]["hovertext"])
        mk_pts = iter(points(tr["markers"]))
        mk_hover = iter(tr["markers"]["hovertext"])
        col = colouring(sim, sid) if sid else None
        msg_fills = iter(tr["messages"]["marker"]["color"])
        for i, c in enumerate(sim.network.channels):
            where = f"step {k}, {c}"
            ts = []
            for m in sim.in_flight(c):
                rec = sim.trace.messages[m]
                if rec.kind == APP:
                    p, hover = next(msg_pts), next(msg_hover)
                    assert sim.trace.message_name(m) in hover, where
                    red = col is not None and col.message(m) == RED
                    assert next(msg_fills) == style.fill(red), f"{where}: colour of its sender"
                else:
                    p, hover = next(mk_pts), next(mk_hover)
                    assert f"{rec.kind} {rec.tag}" in hover, where
                assert str(c) in hover, where
                ts.append(along(segments[i], p))
            assert all(0 < t < 1 for t in ts), f"{where}: inside the channel"
            assert ts == sorted(ts, reverse=True), f"{where}: the head nearest the receiver"
            assert len(set(ts)) == len(ts), f"{where}: one place per message"
        assert next(msg_pts, None) is None and next(mk_pts, None) is None, f"step {k}: extras"


def test_network_draws_markers_with_a_different_symbol_from_messages() -> None:
    sim = run_scenario(load_scenario(WORKED), until=4)  # B and I in flight, then markers
    tr = traces(network_figure(sim, "s1"), network_module.TRACES)
    assert tr["messages"]["x"] and tr["markers"]["x"]
    msg_symbols = set(per_point(tr["messages"]["marker"]["symbol"], len(tr["messages"]["x"])))
    mk_symbols = set(per_point(tr["markers"]["marker"]["symbol"], len(tr["markers"]["x"])))
    assert msg_symbols.isdisjoint(mk_symbols)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_network_highlights_exactly_the_channels_still_being_recorded(path: Path) -> None:
    for k, sim in runs(path):
        for sid in choices(sim):
            tr = traces(network_figure(sim, sid), network_module.TRACES)
            segments = polylines(tr["channels"])
            pending = set(sim.snapshot(sid).pending_channels) if sid else set()
            drawn = polylines(tr["recording"])
            expected = [
                (segments[i][0], segments[i][-1])
                for i, c in enumerate(sim.network.channels)
                if str(c) in pending
            ]
            assert [(d[0], d[-1]) for d in drawn] == expected, f"step {k}, snapshot {sid}"


def test_network_highlights_the_initiator_inputs_once_it_records_and_nothing_once_all_close() -> (
    None
):
    sc = load_scenario(WORKED)

    def highlighted(k: int) -> set[str]:
        sim = run_scenario(sc, until=k)
        tr = traces(network_figure(sim, "s1"), network_module.TRACES)
        segments = polylines(tr["channels"])
        ends = {(ln[0], ln[-1]) for ln in polylines(tr["recording"])}
        return {
            str(c)
            for c, seg in zip(sim.network.channels, segments, strict=True)
            if (seg[0], seg[-1]) in ends
        }

    assert highlighted(4) == {"P2->P1", "P3->P1"}  # P1 has just recorded (step 4)
    assert highlighted(6) == {"P2->P1", "P2->P3"}  # P3 recorded; P3->P1 closed by its marker
    assert highlighted(len(sc.steps)) == set()


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_network_hover_shows_each_process_recorded_state_and_each_channel_recorded_messages(
    path: Path,
) -> None:
    for k, sim in runs(path):
        for sid in list(sim.algorithm.records):
            snap = sim.snapshot(sid)
            tr = traces(network_figure(sim, sid), network_module.TRACES)
            where = f"step {k}, snapshot {sid}"
            for p, hover in zip(sim.network.processes, tr["processes"]["hovertext"], strict=True):
                assert p in hover, where
                rec = snap.processes.get(p)
                if rec is None:
                    assert "not recorded" in hover, where
                else:
                    shown = str(sim.app.describe(rec.state, rec.events))
                    assert f"recorded {shown}" in hover, f"{where}: {p}"
            hovers = piece_texts(tr["channels"])
            for c, hover in zip(sim.network.channels, hovers, strict=True):
                assert str(c) in hover, where
                recorded = snap.channels.get(str(c))
                if recorded is None:
                    assert sid not in hover, f"{where}: {c} is not being recorded"
                    continue
                assert sid in hover, where
                for m in recorded:
                    assert (m.label or repr(m.payload)) in hover, f"{where}: {c}"
                if not recorded:
                    assert "empty" in hover, f"{where}: {c}"


def test_network_hover_of_the_worked_example_names_the_message_recorded_on_p2_to_p1() -> None:
    sim = run_scenario(load_scenario(WORKED))
    tr = traces(network_figure(sim, "s1"), network_module.TRACES)
    i = sim.network.channels.index(Channel("P2", "P1"))
    assert "recorded: H" in piece_texts(tr["channels"])[i]
    p1 = tr["processes"]["hovertext"][0]
    assert "recorded ['A', 'B']" in p1


def test_network_without_a_snapshot_is_all_white_and_says_so() -> None:
    sim = run_scenario(load_scenario(WORKED))
    fig = network_figure(sim, None)
    tr = traces(fig, network_module.TRACES)
    assert set(per_point(tr["processes"]["marker"]["color"], 3)) == {style.WHITE_FILL}
    assert "no snapshot" in title(fig)


# ----------------------------------------------------------------- space-time


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_spacetime_has_one_labelled_event_per_application_action_coloured_as_dijkstra_says(
    path: Path,
) -> None:
    for k, sim in runs(path):
        row = {p: r for r, p in enumerate(sim.network.processes)}
        app = [(i, a) for i, a in enumerate(sim.trace.actions) if a.kind in APP_KINDS]
        for sid in choices(sim):
            ev = traces(spacetime_figure(sim, sid), spacetime_module.TRACES)["events"]
            where = f"step {k}, snapshot {sid}"
            assert points(ev) == [(i, row[a.process]) for i, a in app], where
            assert list(ev["text"]) == [a.label or "" for _, a in app], where
            col = colouring(sim, sid) if sid else None
            reds = [col is not None and col.is_red(i) for i, _ in app]
            n = len(reds)
            assert per_point(ev["marker"]["color"], n) == [style.fill(r) for r in reds], where
            assert per_point(ev["marker"]["symbol"], n) == [style.symbol(r) for r in reds]
            assert per_point(ev["marker"]["line"]["width"], n) == [style.width(r) for r in reds]


def test_spacetime_labels_the_worked_example_events_a_to_j_in_trace_order() -> None:
    sim = run_scenario(load_scenario(WORKED))
    ev = traces(spacetime_figure(sim, "s1"), spacetime_module.TRACES)["events"]
    assert [t for t in ev["text"] if t] == list("ABICFGHDEJ")


def arrows_expected(
    sim: Simulator, control: bool, delivered: bool
) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """(send, receive) points of each message (``control``: marker) delivered or not;
    the receive point of a message in flight has the receiver's row and x = -1."""
    row = {p: r for r, p in enumerate(sim.network.processes)}
    out = []
    for m, rec in enumerate(sim.trace.messages):
        if (rec.kind != APP) != control:
            continue
        got = sim.trace.received_by[m]
        if (got != NOT_RECEIVED) != delivered:
            continue
        c = sim.network.channels[rec.channel]
        start = (float(rec.sent_by), float(row[c.src]))
        out.append((start, (float(got), float(row[c.dst]))))
    return out


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_spacetime_draws_an_arrow_per_delivered_message_from_send_to_receive(path: Path) -> None:
    for k, sim in runs(path):
        tr = traces(spacetime_figure(sim, None), spacetime_module.TRACES)
        for name, control in (("messages", False), ("markers", True)):
            lines = polylines(tr[name])
            expected = arrows_expected(sim, control, delivered=True)
            assert [(ln[0], ln[-1]) for ln in lines] == expected, f"step {k}, {name}"
            assert all(len(ln) == 2 for ln in lines)
            sizes = list(tr[name]["marker"]["size"])  # start, end, gap per arrow
            assert len(sizes) == 3 * len(lines)
            assert all(s > 0 for s in sizes[1::3]), f"step {k}, {name}: arrowheads at ends"
            assert not any(sizes[0::3]) and not any(sizes[2::3]), f"step {k}, {name}"


def test_spacetime_draws_markers_dashed_and_messages_solid() -> None:
    tr = traces(
        spacetime_figure(run_scenario(load_scenario(WORKED)), None), spacetime_module.TRACES
    )
    assert tr["markers"]["line"].get("dash") == "dash"
    assert tr["messages"]["line"].get("dash") in (None, "solid")
    assert tr["markers"]["line"]["color"] != tr["messages"]["line"]["color"]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_spacetime_ends_messages_and_markers_in_flight_at_now(path: Path) -> None:
    for k, sim in runs(path):
        now = len(sim.trace.actions)
        tr = traces(spacetime_figure(sim, None), spacetime_module.TRACES)
        for name, control in (("messages in flight", False), ("markers in flight", True)):
            lines = polylines(tr[name])
            expected = arrows_expected(sim, control, delivered=False)
            assert [ln[0] for ln in lines] == [s for s, _ in expected], f"step {k}, {name}"
            for ln, (start, (_, receiver)) in zip(lines, expected, strict=True):
                x, y = ln[-1]
                assert now <= x <= now + 0.5, f"step {k}, {name}: ends at now ({now}), not {x}"
                low, high = sorted((start[1], receiver))
                assert low < y < high, f"step {k}, {name}: part of the way to its receiver"
            assert tr[name]["line"].get("dash") == "dot", f"{name}: still in flight"
        timeline_end = max(x for x in tr["timelines"]["x"] if x is not None)
        assert timeline_end >= now, f"step {k}: the timelines reach now"


def test_spacetime_worked_example_has_messages_in_flight_before_the_end() -> None:
    sim = run_scenario(load_scenario(WORKED), until=4)  # B, I and the markers in flight
    tr = traces(spacetime_figure(sim, "s1"), spacetime_module.TRACES)
    assert len(polylines(tr["messages in flight"])) == 2
    assert len(polylines(tr["markers in flight"])) == 2


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_spacetime_circles_the_events_recorded_by_the_chosen_snapshot(path: Path) -> None:
    for k, sim in runs(path):
        row = {p: r for r, p in enumerate(sim.network.processes)}
        for sid in choices(sim):
            rec = traces(spacetime_figure(sim, sid), spacetime_module.TRACES)["recorded"]
            red_from = sim.algorithm.records[sid].red_from if sid else {}
            expected = {
                (float(i), float(row[a.process]))
                for i, a in enumerate(sim.trace.actions)
                if a.kind in APP_KINDS and a.process in red_from and i < red_from[a.process]
            }
            assert set(points(rec)) == expected, f"step {k}, snapshot {sid}"
            assert len(points(rec)) == len(expected)


def cut_line(
    red_from: dict[str, int], processes: tuple[str, ...], now: int
) -> list[tuple[float, float]]:
    """Where a snapshot's cut crosses each timeline: just before the process turned red,
    or past the end (now) for a process that has not recorded yet."""
    return [
        (red_from[p] - 0.5 if p in red_from else now + 0.5, float(r))
        for r, p in enumerate(processes)
    ]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_spacetime_draws_the_chosen_cut_bold_and_every_other_cut_thin(path: Path) -> None:
    for k, sim in runs(path):
        now = len(sim.trace.actions)
        procs = sim.network.processes
        records = sim.algorithm.records
        for sid in choices(sim):
            tr = traces(spacetime_figure(sim, sid), spacetime_module.TRACES)
            where = f"step {k}, snapshot {sid}"

            chosen = polylines(tr["cut"])
            if sid is None:
                assert chosen == [], where
            else:
                assert chosen == [cut_line(records[sid].red_from, procs, now)], where
            others = [cut_line(r.red_from, procs, now) for s, r in records.items() if s != sid]
            assert polylines(tr["other cuts"]) == others, where
            assert tr["cut"]["line"]["width"] > tr["other cuts"]["line"]["width"]


def test_spacetime_cut_passes_between_each_process_last_white_and_first_red_event() -> None:
    sim = run_scenario(load_scenario(WORKED))
    red_from = sim.algorithm.records["s1"].red_from
    tr = traces(spacetime_figure(sim, "s1"), spacetime_module.TRACES)
    col = colouring(sim, "s1")
    for (x, _), p in zip(polylines(tr["cut"])[0], sim.network.processes, strict=True):
        mine = sim.trace.process_actions(p)
        assert all(i < x for i in mine if not col.is_red(i))
        assert all(i > x for i in mine if col.is_red(i))
        assert x == red_from[p] - 0.5


def test_spacetime_draws_a_given_cut_instead_of_the_chosen_snapshot() -> None:
    sim = run_scenario(load_scenario(WORKED))
    frontier = {"P1": 1, "P2": 2, "P3": 0}
    limits = cut_limits(sim.trace, frontier)
    row = {p: r for r, p in enumerate(sim.network.processes)}
    tr = traces(spacetime_figure(sim, "s1", limits), spacetime_module.TRACES)
    assert polylines(tr["cut"]) == [
        [(limits[p] - 0.5, float(row[p])) for p in sim.network.processes]
    ]
    inside = {
        (float(i), float(row[p]))
        for p in sim.network.processes
        for i in sim.trace.process_actions(p)[: frontier[p]]
    }
    assert set(points(tr["recorded"])) == inside
    # the snapshot's own cut is still drawn, thin
    red_from = sim.algorithm.records["s1"].red_from
    assert polylines(tr["other cuts"]) == [
        [(red_from[p] - 0.5, float(row[p])) for p in sim.network.processes]
    ]


def test_spacetime_marks_snapshot_initiations_and_marker_receipts_apart_from_events() -> None:
    sim = run_scenario(load_scenario(WORKED))
    tr = traces(spacetime_figure(sim, "s1"), spacetime_module.TRACES)
    algorithm_actions = [i for i, a in enumerate(sim.trace.actions) if a.kind not in APP_KINDS]
    assert [x for x, _ in points(tr["algorithm"])] == algorithm_actions
    assert any("initiates snapshot s1" in h for h in tr["algorithm"]["hovertext"])


# ---------------------------------------------------------------- commutation


def commuting_cases() -> Iterator[tuple[str, Simulator, str]]:
    for path in SCENARIOS:
        sim = run_scenario(load_scenario(path))
        for sid in sim.algorithm.records:
            yield f"{path.stem}:{sid}", sim, sid


def test_commutation_shows_the_arrangement_after_each_swap_coloured_white_and_red() -> None:
    seen_swaps = 0
    for name, sim, sid in commuting_cases():
        result = check_commutation(sim, sid)
        col = colouring(sim, sid)
        assert result.swaps is not None
        for done in range(len(result.swaps) + 1):
            fig = commutation_figure(col, result, done)
            acts = traces(fig, commutation_module.TRACES)["actions"]
            seq = arrangement(result, done)
            where = f"{name} after {done} swap(s)"
            assert list(acts["text"]) == [sim.trace.action_name(i) for i in seq], where
            reds = [col.is_red(i) for i in seq]
            n = len(reds)
            assert per_point(acts["marker"]["color"], n) == [style.fill(r) for r in reds], where
            assert per_point(acts["marker"]["symbol"], n) == [style.symbol(r) for r in reds]
            seen_swaps += done
    assert seen_swaps > 0


def test_commutation_highlights_the_swap_just_made() -> None:
    for name, sim, sid in commuting_cases():
        result = check_commutation(sim, sid)
        col = colouring(sim, sid)
        assert result.swaps is not None
        for done in range(len(result.swaps) + 1):
            swap = traces(commutation_figure(col, result, done), commutation_module.TRACES)["swap"]
            where = f"{name} after {done}"
            if done == 0 and all(s.legal for s in result.swaps):
                assert not swap["x"], f"{where}: nothing swapped yet"
            elif done > 0 and result.swaps[done - 1].legal:
                last = result.swaps[done - 1]
                assert list(swap["x"]) == [last.position, last.position + 1], where
                assert swap["marker"]["color"] == style.HIGHLIGHT, where
                # the two actions now there are the ones exchanged, white first
                seq = arrangement(result, done)
                assert seq[last.position : last.position + 2] == [last.white, last.red], where


def test_commutation_title_counts_inversions_down_to_zero_one_per_swap() -> None:
    checked = 0
    for name, sim, sid in commuting_cases():
        result = check_commutation(sim, sid)
        if not result.holds:
            continue
        col = colouring(sim, sid)
        assert result.swaps is not None
        counts = [
            inversions_in_title(commutation_figure(col, result, done))
            for done in range(len(result.swaps) + 1)
        ]
        assert counts == list(range(result.inversions, -1, -1)), name
        checked += 1
    assert checked >= 3


def test_commutation_marks_sss_between_the_whites_and_the_reds_only_at_the_end() -> None:
    for name, sim, sid in commuting_cases():
        result = check_commutation(sim, sid)
        if not result.holds:
            continue
        col = colouring(sim, sid)
        assert result.swaps is not None
        last = len(result.swaps)
        for done in range(last + 1):
            layout = commutation_figure(col, result, done).to_dict()["layout"]
            shapes = layout.get("shapes", [])
            texts = [a["text"] for a in layout.get("annotations", [])]
            if done < last:
                assert not shapes and "SSS" not in texts, f"{name} after {done}: too early"
                continue
            assert len(shapes) == 1 and "SSS" in texts, name
            boundary = shapes[0]["x0"]
            assert shapes[0]["x1"] == boundary == result.n_white - 0.5, name
            seq = arrangement(result, done)
            assert all(not col.is_red(i) for i in seq[: result.n_white]), name
            assert all(col.is_red(i) for i in seq[result.n_white :]), name


def test_commutation_on_non_fifo_breaks_highlights_the_illegal_swap_naming_the_message() -> None:
    sim = run_scenario(load_scenario(NON_FIFO))
    result = check_commutation(sim, "s1")
    assert not result.holds and result.swaps is not None
    blocked = next(s for s in result.swaps if not s.legal)
    col = colouring(sim, "s1")
    fig = commutation_figure(col, result, len(result.swaps))
    swap = traces(fig, commutation_module.TRACES)["swap"]
    assert list(swap["x"]) == [blocked.position, blocked.position + 1]
    assert swap["marker"]["color"] == style.ILLEGAL
    assert swap["marker"]["line"]["color"] == style.ILLEGAL
    texts = " ".join(a["text"] for a in fig.to_dict()["layout"].get("annotations", []))
    assert "cannot swap" in texts and "late" in texts
    assert "SSS" not in texts
    assert inversions_in_title(fig) > 0


def test_commutation_names_an_unlabelled_message_that_blocks_the_swap() -> None:
    sim = unlabelled_non_fifo_break()
    result = check_commutation(sim, "s1")
    assert result.witness is not None
    name = sim.trace.message_name(result.witness)
    assert result.swaps is not None
    fig = commutation_figure(colouring(sim, "s1"), result, len(result.swaps))
    texts = " ".join(a["text"] for a in fig.to_dict()["layout"].get("annotations", []))
    assert re.search(rf"\b{re.escape(name)}\b", texts), texts


def test_commutation_with_too_many_swaps_to_list_shows_where_they_lead() -> None:
    sim = Simulator(Network(["P1", "P2"]))
    sim.step(StartSnapshot("P1", "s1"))
    for k in range(12):
        sim.step(Internal("P1", f"r{k}"))
    for k in range(12):
        sim.step(Internal("P2", f"w{k}"))
    sim.run()
    result = check_commutation(sim, "s1", max_swaps=50)  # 144 inversions: not listed
    assert result.swaps is None and result.holds
    col = colouring(sim, "s1")
    fig = commutation_figure(col, result)
    acts = traces(fig, commutation_module.TRACES)["actions"]
    assert list(acts["text"]) == [sim.trace.action_name(i) for i in result.order]
    assert inversions_in_title(fig) == 0
    shapes = fig.to_dict()["layout"]["shapes"]
    assert [s["x0"] for s in shapes] == [result.n_white - 0.5]


# ------------------------------------------------------------ update in place


def fresh_widget(fig: go.Figure) -> go.FigureWidget:
    return go.FigureWidget(fig)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda sim, sid: network_figure(sim, sid), id="network"),
        pytest.param(lambda sim, sid: spacetime_figure(sim, sid), id="spacetime"),
        pytest.param(lambda sim, sid: network_spec(sim, sid), id="network-spec"),
        pytest.param(lambda sim, sid: spacetime_spec(sim, sid), id="spacetime-spec"),
    ],
)
def test_update_in_place_makes_the_widget_show_each_new_figure_keeping_its_traces(
    make: Any,
) -> None:
    sims = [sim for _, sim in runs(CONCURRENT)]
    first = sims[0]
    start = make(first, None)
    widget = fresh_widget(start if isinstance(start, go.Figure) else go.Figure(start))
    kept = list(widget.data)
    layout = widget.layout
    # forwards through the run, switching snapshots, then back to the start
    sequence = [(sim, sid) for sim in sims for sid in choices(sim)]
    sequence += [(sims[-1], None), (sims[3], "s1"), (first, None)]
    for sim, sid in sequence:
        new = make(sim, sid)
        update_in_place(widget, new)
        target = new if isinstance(new, go.Figure) else go.Figure(new)
        assert plain(widget) == plain(target), f"after {len(sim.trace.actions)} actions, {sid}"
        assert len(widget.data) == len(kept)
        assert all(a is b for a, b in zip(widget.data, kept, strict=True)), "traces replaced"
        assert widget.layout is layout


def test_update_in_place_follows_the_commutation_steps_forwards_and_back() -> None:
    sim = run_scenario(load_scenario(CONCURRENT))
    result = check_commutation(sim, "s2")
    col = colouring(sim, "s2")
    assert result.swaps is not None and len(result.swaps) >= 3
    widget = fresh_widget(commutation_figure(col, result, 0))
    kept = list(widget.data)
    n = len(result.swaps)
    for done in [*range(n + 1), *range(n, -1, -1), n, 0]:
        new = commutation_figure(col, result, done)
        update_in_place(widget, new)
        assert plain(widget) == plain(new), f"after {done} swaps"
        assert all(a is b for a, b in zip(widget.data, kept, strict=True))


def test_update_in_place_of_an_unchanged_figure_changes_nothing() -> None:
    sim = run_scenario(load_scenario(WORKED), until=6)
    fig = network_figure(sim, "s1")
    widget = fresh_widget(fig)
    before = plain(widget)
    update_in_place(widget, network_figure(sim, "s1"))
    assert plain(widget) == before


def test_commutation_labels_never_run_into_each_other_and_the_swap_is_always_named() -> None:
    from snapshotlib.viz.commutation import CHAR_PX, _fitted_labels

    short = [f"e{k}" for k in range(10)]
    labels, positions, thinned = _fitted_labels(short, slot=60, keep=set())
    assert labels == short and set(positions) == {"bottom center"} and thinned == 0

    long = [f"got-P1->P2#{k}" for k in range(60)]  # a live run's receives
    slot = 10.0
    labels, positions, thinned = _fitted_labels(long, slot=slot, keep={31, 32})
    assert thinned > 1 and labels[31] and labels[32]
    one_row = _fitted_labels(long[:5], slot=120, keep=set())  # wide slots: all named
    assert all(one_row[0]) and one_row[2] == 0
    for row in ("bottom center", "top center"):
        named = [
            k
            for k, (lab, pos) in enumerate(zip(labels, positions, strict=False))
            if lab and pos == row
        ]
        named = [k for k in named if k not in (31, 32)]
        gaps = [(b - a) * slot for a, b in itertools.pairwise(named)]
        assert all(gap >= len(long[0]) * CHAR_PX * 0.9 for gap in gaps), (row, gaps)
