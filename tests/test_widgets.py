"""The widgets driven headlessly: click their buttons, set their controls, and check
the engine's state and what the figures on screen show after each step.

``Button.click()`` runs a button's handlers as a browser click would; setting a
control's ``value`` fires its observers. The figures are read from the widgets'
``FigureWidget`` s, which are updated in place and never re-created.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import figure_states, opened_states

from snapshotlib.text_colours import WRONG

try:
    import ipywidgets as w
    import plotly.graph_objects as go
    from plotly.callbacks import Points

    from snapshotlib import Channel, Internal, Network, Send, Simulator, StartSnapshot
    from snapshotlib.checks.commutation import arrangement
    from snapshotlib.colouring import colouring
    from snapshotlib.formats.scenario import load_scenario, run_scenario
    from snapshotlib.trace import APP, APP_KINDS, RECEIVE
    from snapshotlib.viz import commutation as commutation_module
    from snapshotlib.viz import network as network_module
    from snapshotlib.viz import spacetime as spacetime_module
    from snapshotlib.viz import style
    from snapshotlib.widgets import CommutationStepper, CutChecker, Explorer
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


ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "examples" / "scenarios"
WORKED = SCENARIOS / "worked-example.json"
TOKEN_RING = SCENARIOS / "token-ring.json"
CONCURRENT = SCENARIOS / "concurrent-snapshots.json"
NON_FIFO = SCENARIOS / "non-fifo-breaks.json"

WHITE, RED = style.WHITE_FILL, style.RED_FILL


# ---------------------------------------------------------------- helpers


def walk(widget: w.Widget) -> Iterator[w.Widget]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


def buttons(widget: w.Widget) -> list[w.Button]:
    return [b for b in walk(widget) if isinstance(b, w.Button)]


def trace(view: go.FigureWidget, names: tuple[str, ...], name: str) -> Any:
    """The trace called ``name`` of a figure on screen, where its module says it is."""
    t = view.data[names.index(name)]
    assert t.name == name
    return t


def process_fills(ex: Explorer) -> list[str]:
    colours = trace(ex.network_view, network_module.TRACES, "processes").marker.color
    return list(colours) if isinstance(colours, list | tuple) else [colours] * 3


def event_labels(view: go.FigureWidget) -> list[str]:
    return list(trace(view, spacetime_module.TRACES, "events").text or ())


def deliveries(ex: Explorer) -> dict[str, w.Button]:
    """The delivery buttons by what they say."""
    return {b.description: b for b in ex.deliveries.children if isinstance(b, w.Button)}


def head_label(sim: Simulator, channel: Channel) -> str:
    """What a learner should read on the button for ``channel``: where and what arrives."""
    m = sim.in_flight(channel)[0]
    rec = sim.trace.messages[m]
    what = sim.trace.message_name(m) if rec.kind == APP else f"{rec.kind} {rec.tag}"
    return f"{channel.src}→{channel.dst}: {what}"


def table_row(ex: Explorer, process: str) -> list[str]:
    """The cells of the recorded-state table's row for ``process``: name, colour,
    recorded events, recorded state."""
    found = re.search(rf"<tr data-process='{process}'>(.*?)</tr>", ex.table.value)
    assert found, f"no row for {process} in the table"
    return [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", found.group(1))]


def status(ex: Explorer) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", ex.status.value))


def is_error(ex: Explorer) -> bool:
    return WRONG in ex.status.value


def screen(ex: Explorer) -> tuple[Any, ...]:
    """Everything the explorer shows that an action could change."""
    return (
        ex.network_view.to_dict(),
        ex.spacetime_view.to_dict(),
        ex.table.value,
        sorted(deliveries(ex)),
        list(ex.sim.trace.actions),
    )


def tokens_explorer(n: int, seed: int = 0, sends: int = 0) -> Explorer:
    """A complete network of ``n`` token holders with ``sends`` messages in flight."""
    procs = [f"P{i}" for i in range(n)]
    ex = Explorer(Network(procs), app="tokens", initial={p: 100 for p in procs}, seed=seed)
    pairs = [(a, b) for a in procs for b in procs if a != b]
    for a, b in pairs[:sends]:
        assert ex.take(Send(a, b, 1))
    return ex


def red_before_white(n: int) -> Simulator:
    """P1 turns red at once and does ``n`` internal events, then P2 does ``n`` white ones."""
    sim = Simulator(Network(["P1", "P2"]))
    sim.step(StartSnapshot("P1", "s1"))
    for k in range(n):
        sim.step(Internal("P1", f"r{k}"))
    for k in range(n):
        sim.step(Internal("P2", f"w{k}"))
    sim.run()
    return sim


# =================================================================== Explorer


def test_step_walks_the_worked_example_scenario_steps_in_order() -> None:
    sc = load_scenario(WORKED)
    ex = Explorer(sc)
    step = ex.button("Step")
    for k in range(1, len(sc.steps) + 1):
        step.click()
        ref = run_scenario(sc, until=k)
        assert ex.sim.trace.actions == ref.trace.actions, f"after step {k}"
        expected = [a.label or "" for a in ref.trace.actions if a.kind in APP_KINDS]
        assert event_labels(ex.spacetime_view) == expected, f"after step {k}"
    assert [t for t in event_labels(ex.spacetime_view) if t] == list("ABICFGHDEJ")
    before = len(ex.sim.trace.actions)
    step.click()
    assert len(ex.sim.trace.actions) == before
    assert "nothing left" in status(ex)


def test_step_through_a_seeded_random_run_gives_the_run_the_scenario_file_describes() -> None:
    sc = load_scenario(CONCURRENT)  # ends with {"do": "run", "scheduler": "random", "seed": 7}
    ex = Explorer(sc)
    while ex.step_once():
        pass
    ref = run_scenario(sc)
    assert ex.sim.trace.actions == ref.trace.actions
    for sid in ref.algorithm.records:
        assert ex.sim.snapshot(sid) == ref.snapshot(sid)


def test_undo_in_a_scenario_random_run_then_step_repeats_the_same_choice() -> None:
    sc = load_scenario(CONCURRENT)
    ex = Explorer(sc)
    for _ in range(len(sc.steps) + 5):  # into the random run
        ex.step_once()
    for _ in range(4):
        ex.step_once()
        chosen = ex.sim.trace.actions[-1]
        ex.button("Undo").click()
        ex.button("Step").click()
        assert ex.sim.trace.actions[-1] == chosen
    while ex.step_once():
        pass
    assert ex.sim.trace.actions == run_scenario(sc).trace.actions


def test_a_delivery_button_per_non_empty_channel_says_what_arrives() -> None:
    sc = load_scenario(WORKED)
    ex = Explorer(sc)
    for k in range(len(sc.steps) + 1):
        busy = [c for c in ex.sim.network.channels if ex.sim.in_flight(c)]
        assert sorted(deliveries(ex)) == sorted(head_label(ex.sim, c) for c in busy), f"step {k}"
        for c, b in zip(busy, [deliveries(ex)[head_label(ex.sim, c)] for c in busy], strict=True):
            assert str(c) in b.tooltip
        ex.step_once()


def test_delivery_buttons_of_the_worked_example_after_p1_initiates() -> None:
    ex = Explorer(WORKED)
    for _ in range(4):  # A, B, I, P1 initiates s1
        ex.step_once()
    assert sorted(deliveries(ex)) == ["P1→P2: B", "P1→P3: marker s1", "P3→P2: I"]


def test_clicking_a_delivery_button_delivers_the_head_of_that_channel() -> None:
    ex = Explorer(WORKED)
    for _ in range(4):
        ex.step_once()
    deliveries(ex)["P3→P2: I"].click()
    last = ex.sim.trace.actions[-1]
    assert last.kind == RECEIVE and ex.sim.network.channels[last.channel] == Channel("P3", "P2")
    assert ex.sim.trace.message_name(last.message) == "I"
    assert "P3→P2: I" not in deliveries(ex)


def test_start_snapshot_turns_the_process_red_and_fills_the_table() -> None:
    ex = Explorer(WORKED)
    ex.step_once()
    ex.step_once()  # A and B at P1
    assert process_fills(ex) == [WHITE, WHITE, WHITE]
    assert "No snapshot yet" in ex.table.value
    ex.snap_at.value = "P1"
    ex.button("Start snapshot").click()
    assert ex.sim.algorithm.records["s1"].red_from == {"P1": 2}
    assert process_fills(ex) == [RED, WHITE, WHITE]
    assert "snapshot s1, initiated by P1" in ex.table.value
    assert table_row(ex, "P1")[:3] == ["P1", "red", "A, B"]
    assert table_row(ex, "P1")[3].startswith("['A', 'B']")  # the recorded state
    assert table_row(ex, "P2")[1:3] == ["white", "not recorded yet"]
    assert ex.snapshot_choice.value == "s1"
    assert "snapshot s1" in ex.network_view.layout.title.text


def test_delivering_a_marker_turns_its_receiver_red() -> None:
    ex = Explorer(WORKED)
    ex.step_once()
    ex.step_once()
    ex.button("Start snapshot").click()  # at P1, the first process
    deliveries(ex)["P1→P3: marker s1"].click()
    assert "P3" in ex.sim.algorithm.records["s1"].red_from
    assert process_fills(ex) == [RED, WHITE, RED]
    assert table_row(ex, "P3")[1] == "red"
    events = trace(ex.spacetime_view, spacetime_module.TRACES, "events")
    assert set(events.marker.color) == {WHITE}  # P1's A and B came before it turned red


def test_undo_redo_and_reset_move_the_engine_and_the_views_together() -> None:
    ex = Explorer(WORKED)
    undo, redo, reset = ex.button("Undo"), ex.button("Redo"), ex.button("Reset")
    assert undo.disabled and redo.disabled
    ex.step_once()
    ex.step_once()
    ex.button("Start snapshot").click()
    deliveries(ex)["P1→P3: marker s1"].click()
    n = len(ex.sim.trace.actions)
    assert not undo.disabled and redo.disabled

    undo.click()
    assert len(ex.sim.trace.actions) == n - 1
    assert process_fills(ex) == [RED, WHITE, WHITE]
    assert table_row(ex, "P3")[1:3] == ["white", "not recorded yet"]
    assert not redo.disabled

    redo.click()
    assert len(ex.sim.trace.actions) == n
    assert process_fills(ex) == [RED, WHITE, RED]
    assert redo.disabled

    undo.click()
    undo.click()  # the snapshot's start itself
    assert "s1" not in ex.sim.algorithm.records
    assert process_fills(ex) == [WHITE, WHITE, WHITE]
    assert "No snapshot yet" in ex.table.value
    assert list(ex.snapshot_choice.options) == []

    reset.click()
    assert ex.sim.time == 0
    assert event_labels(ex.spacetime_view) == []
    assert undo.disabled and redo.disabled
    assert "nothing in flight" in str([c.value for c in ex.deliveries.children])
    ex.step_once()
    assert ex.sim.trace.action_name(0) == "A", "after a reset Step starts the scenario again"


def test_a_send_with_too_few_tokens_is_refused_in_the_status_line_and_changes_nothing() -> None:
    ex = Explorer(TOKEN_RING)  # P1 holds the only token
    before = screen(ex)
    ex.send_from.value = "P1"
    assert ex.send_to.value == "P2"
    ex.send_payload.value = "5"
    ex.button("Send").click()
    assert is_error(ex)
    assert "cannot" in status(ex) and "token" in status(ex)
    assert screen(ex) == before


def test_a_snapshot_id_reused_at_the_same_process_is_refused_and_changes_nothing() -> None:
    ex = Explorer(TOKEN_RING)
    ex.snap_at.value = "P2"
    ex.button("Start snapshot").click()
    assert not is_error(ex)
    assert ex.snap_id.value == "s2", "the id field offers the next unused id"
    before = screen(ex)
    ex.snap_id.value = "s1"
    ex.button("Start snapshot").click()
    assert is_error(ex)
    assert "already recorded" in status(ex) and "s1" in status(ex)
    assert screen(ex) == before


def test_internal_and_send_buttons_take_the_learner_s_action_with_its_label() -> None:
    ex = Explorer(TOKEN_RING)
    ex.internal_at.value = "P3"
    ex.internal_label.value = "think"
    ex.button("Internal event").click()
    ex.send_from.value = "P1"
    ex.send_payload.value = "1"
    ex.send_label.value = "gift"
    ex.button("Send").click()
    assert event_labels(ex.spacetime_view) == ["think", "gift"]
    assert ex.sim.states["P1"] == 0
    assert "P1→P2: gift" in deliveries(ex)


def test_a_figure_widget_opens_with_its_whole_figure_and_classes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On a busy machine the browser drew a view from the opening state alone: plotly's
    # own FigureWidget opens empty and without classes, and the learner saw a blank plot.
    states = opened_states(monkeypatch)
    ex = Explorer(WORKED)
    opened = figure_states(states)
    assert [s["_dom_classes"] for s in opened] == [
        ("explorer-network",),
        ("explorer-spacetime",),
    ]
    for state, view in zip(opened, (ex.network_view, ex.spacetime_view), strict=True):
        assert len(state["_widget_data"]) == len(view.data) > 0
        assert state["_widget_layout"].get("xaxis") or state["_widget_layout"].get("height")
    states.clear()
    CutChecker(str(WORKED))
    CommutationStepper(str(WORKED))
    assert [len(s["_widget_data"]) > 0 for s in figure_states(states)] == [True, True]


def test_every_figure_s_browser_code_is_the_loader_sharing_plotly_s_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # plotly's 5 MB module as each figure's own code was parsed once per figure, all at
    # once after Run All; under load a figure missed anywidget's two seconds to load and
    # never drew an update. The loader imports the module sent along once per page.
    from plotly.basewidget import BaseFigureWidget

    from snapshotlib.widgets.figure_widget import LOADER

    states = opened_states(monkeypatch)
    Explorer(WORKED)
    opened = figure_states(states)
    assert len(opened) == 2
    for state in opened:
        assert state["_esm"] == LOADER
        assert state["_plotly_esm"] == str(BaseFigureWidget._esm)
    assert 'model.get("_plotly_esm")' in LOADER
    assert len(LOADER) < len(opened[0]["_plotly_esm"]) / 1000


def test_the_loader_knows_every_change_plotly_s_figure_model_applies() -> None:
    # the loader applies changes held while plotly's module loads with plotly's own
    # exported FigureModel, one do_<change> method each: a plotly that renames them, or
    # adds a change, must be noticed here rather than as a stale figure in a lesson
    import re

    from plotly.basewidget import BaseFigureWidget

    from snapshotlib.widgets.figure_widget import LOADER

    plotly = str(BaseFigureWidget._esm)
    block = re.search(r"const CHANGES = \{(.*?)\};", LOADER, re.S)
    assert block is not None
    held = set(re.findall(r"^\s*(\w+): \[", block.group(1), re.M))
    applied = set(re.findall(r"\bdo_(\w+)\(\)\{", plotly)) - {"data", "layout"}
    assert held == applied
    assert "as FigureModel" in plotly


def test_figure_widgets_are_updated_in_place_never_re_created() -> None:
    ex = Explorer(WORKED)
    views = (ex.network_view, ex.spacetime_view)
    kept = [list(v.data) for v in views]

    def same() -> None:
        assert all(v is x for v, x in zip((ex.network_view, ex.spacetime_view), views, strict=True))
        for v, traces in zip(views, kept, strict=True):
            assert all(a is b for a, b in zip(v.data, traces, strict=True))
            assert len(v.data) == len(traces)
        on_screen = [x for x in walk(ex.widget) if isinstance(x, go.FigureWidget)]
        assert len(on_screen) == 2 and all(any(x is v for v in views) for x in on_screen), (
            "the figures on screen are the same two widgets"
        )

    for _ in range(5):
        ex.button("Step").click()
        same()
    ex.button("Start snapshot").click()
    same()
    next(iter(deliveries(ex).values())).click()
    same()
    for name in ("Undo", "Undo", "Redo", "Reset"):
        ex.button(name).click()
        same()
    while ex.step_once():
        same()
    ex.snapshot_choice.value = "s1"
    same()


def test_play_steps_on_each_tick_while_playing_and_stops_when_nothing_is_left() -> None:
    sc = load_scenario(TOKEN_RING)
    ex = Explorer(sc)
    ex.play.value += 1  # a tick while paused does nothing
    assert ex.sim.time == 0
    ex.play.playing = True
    ticks = 0
    while ex.play.playing and ticks < 200:
        before = ex.sim.time
        ex.play.value += 1
        ticks += 1
        if ex.play.playing:
            assert ex.sim.time == before + 1, "one action per tick"
    assert not ex.play.playing, "play stops by itself"
    assert ex.sim.trace.actions == run_scenario(sc).trace.actions
    assert "nothing left" in status(ex)


def test_an_action_of_the_learners_own_leaves_the_script_and_play_goes_on_from_there() -> None:
    ex = Explorer(TOKEN_RING)
    for _ in range(3):
        ex.button("Step").click()
    scripted = ex._next_scripted()
    assert scripted is not None
    by_hand = next(
        a
        for a in ex.sim.enabled()
        if a.channel != scripted[0].channel  # type: ignore[attr-defined]
    )
    assert ex.take(by_hand)
    assert "off the scenario's script" in status(ex) and not is_error(ex)
    ex.play.playing = True
    ticks = 0
    while ex.play.playing and ticks < 200:
        ex.play.value += 1
        ticks += 1
        assert not is_error(ex), status(ex)
    assert "nothing left" in status(ex)
    assert not ex.sim.has_pending()
    assert ex.sim.snapshot("s1").complete


def test_doing_by_hand_what_the_script_does_next_keeps_the_script() -> None:
    sc = load_scenario(TOKEN_RING)
    ex = Explorer(sc)
    for _ in range(3):
        ex.button("Step").click()
    scripted = ex._next_scripted()
    assert scripted is not None
    plain = next(a for a in ex.sim.enabled() if a.channel == scripted[0].channel)  # type: ignore[attr-defined]
    assert ex.take(plain)
    assert "off the scenario's script" not in status(ex)
    while ex.step_once():
        pass
    assert ex.sim.trace.actions == run_scenario(sc).trace.actions


def test_a_learners_send_leaves_the_script_instead_of_failing_its_next_step() -> None:
    ex = Explorer(TOKEN_RING)
    assert ex.take(Send("P1", "P2", 1, "mine"))  # the scenario's first send now lacks a token
    ex.play.playing = True
    ex.play.value += 1
    assert not is_error(ex), status(ex)
    assert ex.sim.time == 2


def test_start_snapshot_after_the_run_is_over_takes_a_fresh_id() -> None:
    ex = Explorer(TOKEN_RING)
    while ex.step_once():
        pass
    assert ex.snap_at.value == "P1" and "P1" in ex.sim.snapshot("s1").processes
    ex.button("Start snapshot").click()
    assert not is_error(ex), status(ex)
    assert ex.sim.snapshot("s2").initiators == ("P1",)


def test_a_second_initiator_of_the_same_snapshot_keeps_its_id() -> None:
    ex = tokens_explorer(3)
    ex.button("Start snapshot").click()  # s1 at P0
    assert ex.snap_id.value == "s2", "P0 recorded s1: the next snapshot it starts is s2"
    ex.snap_id.value = "s1"
    ex.snap_at.value = "P2"  # has not recorded s1: may start it too
    assert ex.snap_id.value == "s1"
    ex.button("Start snapshot").click()
    assert not is_error(ex), status(ex)
    assert set(ex.sim.snapshot("s1").initiators) == {"P0", "P2"}


def test_the_seed_makes_step_deterministic() -> None:
    def trace_of(seed: int) -> list[Any]:
        ex = tokens_explorer(4, seed=seed, sends=12)
        for _ in range(30):
            ex.button("Step").click()
        return list(ex.sim.trace.actions)

    assert trace_of(3) == trace_of(3)
    assert any(trace_of(s) != trace_of(3) for s in range(4)), "the seed changes the choices"


def test_the_seed_box_changes_the_choices_of_step() -> None:
    a = tokens_explorer(4, seed=0, sends=12)
    b = tokens_explorer(4, seed=0, sends=12)
    b.seed.value = 99
    for _ in range(12):
        a.step_once()
        b.step_once()
    assert a.sim.trace.actions != b.sim.trace.actions


def test_undo_then_step_repeats_the_same_random_choice() -> None:
    ex = tokens_explorer(4, seed=5, sends=12)
    for _ in range(8):
        ex.button("Step").click()
        chosen = ex.sim.trace.actions[-1]
        ex.button("Undo").click()
        ex.button("Step").click()
        assert ex.sim.trace.actions[-1] == chosen


def test_the_snapshot_drop_down_switches_the_colouring() -> None:
    sim = run_scenario(load_scenario(CONCURRENT), until=11)  # s1, s2 under way, s3 just begun
    ex = Explorer(sim)
    records = sim.algorithm.records
    assert list(ex.snapshot_choice.options) == ["s1", "s2", "s3"]
    shown = set()
    for sid in ("s1", "s3", "s2"):
        ex.snapshot_choice.value = sid
        expected = [RED if p in records[sid].red_from else WHITE for p in sim.network.processes]
        assert process_fills(ex) == expected, sid
        col = colouring(sim, sid)
        app = [i for i, a in enumerate(sim.trace.actions) if a.kind in APP_KINDS]
        events = trace(ex.spacetime_view, spacetime_module.TRACES, "events")
        assert list(events.marker.color) == [RED if col.is_red(i) else WHITE for i in app]
        assert f"snapshot {sid}, initiated by" in ex.table.value
        assert sid in ex.network_view.layout.title.text
        shown.add(tuple(expected))
    assert len(shown) > 1, "the three snapshots colour the processes differently"


def test_with_many_deliveries_the_buttons_give_way_to_a_drop_down() -> None:
    ex = tokens_explorer(10, sends=90)  # a message on each of the 90 channels
    kinds = [type(c) for c in ex.deliveries.children]
    assert kinds == [w.Dropdown, w.Button]
    menu, go_button = ex.deliveries.children
    assert go_button.description == "Deliver"
    assert len(menu.options) == 90
    busy = [c for c in ex.sim.network.channels if ex.sim.in_flight(c)]
    assert sorted(label for label, _ in menu.options) == sorted(head_label(ex.sim, c) for c in busy)
    assert menu.value is not None, "a delivery is chosen from the start"

    _, first = menu.options[0]
    go_button.click()
    last = ex.sim.trace.actions[-1]
    assert last.kind == RECEIVE
    assert ex.sim.network.channels[last.channel] == first.channel

    label, action = menu.options[40]
    menu.value = action
    ex.button("Deliver").click()
    last = ex.sim.trace.actions[-1]
    assert ex.sim.network.channels[last.channel] == action.channel, label
    assert len(ex.sim.trace.actions) == 90 + 2
    assert menu.value is not None


def test_deliveries_return_to_buttons_when_few_are_left() -> None:
    ex = tokens_explorer(10, sends=30)
    assert isinstance(ex.deliveries.children[0], w.Dropdown)
    for _ in range(5):
        ex.button("Deliver").click()
    assert isinstance(ex.deliveries.children[0], w.Dropdown)  # 25 channels still busy
    ex.button("Deliver").click()
    assert all(isinstance(b, w.Button) for b in ex.deliveries.children)
    assert len(deliveries(ex)) == 24


def test_every_explorer_button_has_a_description_and_a_tooltip() -> None:
    few = Explorer(WORKED)
    for _ in range(4):
        few.step_once()
    many = tokens_explorer(10, sends=90)
    for ex in (few, many):
        found = buttons(ex.widget)
        assert len(found) >= 8
        for b in found:
            assert b.description.strip(), f"a button with no text (icon {b.icon!r})"
            assert b.tooltip and b.tooltip.strip(), f"button {b.description!r} has no tooltip"


def test_explorer_accepts_a_network_a_simulator_a_scenario_or_a_path() -> None:
    sc = load_scenario(WORKED)
    for source in (sc, WORKED, str(WORKED), sc.simulator(), Network(["a", "b"])):
        ex = Explorer(source)  # type: ignore[arg-type]
        assert ex.sim.time == 0
        assert [t.name for t in ex.network_view.data] == list(network_module.TRACES)
        assert [t.name for t in ex.spacetime_view.data] == list(spacetime_module.TRACES)


# ================================================================= CutChecker


def cut_x(cc: CutChecker) -> list[float]:
    return [x for x in trace(cc.view, spacetime_module.TRACES, "cut").x if x is not None]


def circled(cc: CutChecker) -> set[int]:
    return {int(x) for x in trace(cc.view, spacetime_module.TRACES, "recorded").x}


def check_cut_drawn(cc: CutChecker) -> None:
    """The bold line passes after each process's last event inside and before its first
    event outside, and the events inside are circled."""
    trace_ = cc.sim.trace
    inside = set()
    for p, x in zip(cc.sim.network.processes, cut_x(cc), strict=True):
        mine = trace_.process_actions(p)
        n = cc.frontier[p]
        assert all(i < x for i in mine[:n]), p
        assert all(i > x for i in mine[n:]), p
        inside |= set(mine[:n])
    assert circled(cc) == inside


def verdict(cc: CutChecker) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", cc.verdict.value))


def test_cut_checker_has_a_slider_per_process_starting_with_everything_inside() -> None:
    cc = CutChecker(str(WORKED))
    trace_ = cc.sim.trace
    assert list(cc.sliders) == list(cc.sim.network.processes)
    for p, s in cc.sliders.items():
        assert s.max == len(trace_.process_actions(p)) == s.value
    assert verdict(cc).startswith("Consistent")
    check_cut_drawn(cc)


def test_cut_checker_sliders_set_the_frontier_and_the_verdict_names_the_message() -> None:
    cc = CutChecker(str(WORKED))
    cc.sliders["P1"].value = 1  # A only: B is sent outside the cut ...
    cc.sliders["P2"].value = 2  # ... but received inside it, at G
    assert cc.frontier == {"P1": 1, "P2": 2, "P3": 2}
    assert verdict(cc).startswith("Inconsistent")
    assert re.search(r"\bmessage B\b", verdict(cc))
    assert WRONG in cc.verdict.value
    check_cut_drawn(cc)
    cc.sliders["P1"].value = 2
    assert verdict(cc).startswith("Inconsistent")  # now J receives E, sent by P1 after B
    assert "message E" in verdict(cc)
    cc.sliders["P3"].value = 1
    assert verdict(cc).startswith("Consistent")
    check_cut_drawn(cc)


def test_cut_checker_set_frontier_moves_several_processes_at_once() -> None:
    cc = CutChecker(str(WORKED))
    cc.set_frontier(P1=0, P2=0, P3=1)
    assert cc.frontier == {"P1": 0, "P2": 0, "P3": 1}
    assert verdict(cc).startswith("Consistent")
    check_cut_drawn(cc)
    cc.set_frontier(P3=2)  # J receives E, sent outside the cut
    assert "message E" in verdict(cc)


def test_cut_checker_click_on_an_event_moves_the_frontier_just_past_it_and_back() -> None:
    cc = CutChecker(str(WORKED), frontier={"P1": 0, "P2": 0, "P3": 0})
    c = cc.sim.trace.process_actions("P1")[2]  # C, P1's third event
    cc.click_event(c)
    assert cc.frontier["P1"] == 3
    check_cut_drawn(cc)
    cc.click_event(c)  # the last event inside: clicking takes it out again
    assert cc.frontier["P1"] == 2
    check_cut_drawn(cc)


def test_cut_checker_listens_to_clicks_on_the_events_of_the_diagram() -> None:
    cc = CutChecker(str(WORKED), frontier={"P1": 0, "P2": 0, "P3": 1})
    events = trace(cc.view, spacetime_module.TRACES, "events")
    g = cc.sim.trace.process_actions("P2")[1]  # G
    k = list(events.x).index(g)
    points = Points(
        point_inds=[k],
        xs=[events.x[k]],
        ys=[events.y[k]],
        trace_name="events",
        trace_index=spacetime_module.TRACES.index("events"),
    )
    events._dispatch_on_click(points, None)  # what plotly does on a click in the browser
    assert cc.frontier["P2"] == 2
    assert "message B" in verdict(cc)  # G receives B, which P1 sends outside the cut


def test_cut_checker_figure_is_updated_in_place() -> None:
    cc = CutChecker(str(WORKED))
    view, kept = cc.view, list(cc.view.data)
    for n in range(4):
        cc.sliders["P1"].value = n
        assert cc.view is view and all(a is b for a, b in zip(cc.view.data, kept, strict=True))
        check_cut_drawn(cc)


# ========================================================== CommutationStepper


def labels(cs: CommutationStepper) -> list[str]:
    return list(trace(cs.view, commutation_module.TRACES, "actions").text)


def inversions(cs: CommutationStepper) -> int:
    found = re.search(r"(\d+) inversion", cs.view.layout.title.text)
    assert found
    return int(found.group(1))


def explanation(cs: CommutationStepper) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", cs.explanation.value))


def shows_sss(cs: CommutationStepper) -> bool:
    return bool(cs.view.layout.shapes) or any(a.text == "SSS" for a in cs.view.layout.annotations)


def test_commutation_stepper_buttons_move_through_the_swaps_and_the_figure_follows() -> None:
    cs = CommutationStepper(str(WORKED))
    r = cs.result
    assert r.swaps is not None
    n = len(r.swaps)
    assert n == r.inversions == 3
    name = cs.sim.trace.action_name

    def at(done: int) -> None:
        assert cs.position.value == done
        assert labels(cs) == [name(i) for i in arrangement(r, done)]
        assert inversions(cs) == r.inversions - done
        swap = trace(cs.view, commutation_module.TRACES, "swap")
        if done:
            s = r.swaps[done - 1]  # type: ignore[index]
            assert list(swap.x) == [s.position, s.position + 1]
        else:
            assert not swap.x
        assert shows_sss(cs) == (done == n)

    at(0)
    cs.back.click()
    at(0)
    for k in range(1, n + 1):
        cs.forward.click()
        at(k)
    cs.forward.click()
    at(n)
    cs.back.click()
    at(n - 1)
    cs.first.click()
    at(0)
    cs.last.click()
    at(n)
    cs.position.value = 1
    at(1)


def test_commutation_stepper_ends_explaining_sss() -> None:
    cs = CommutationStepper(str(WORKED))
    assert "SSS" not in explanation(cs)
    assert "3 inversion(s) left" in explanation(cs)
    cs.last.click()
    text = explanation(cs)
    assert "All white actions now precede all red ones" in text
    assert "SSS" in text
    assert "P2->P1: H" in text  # the message in transit across the cut
    assert "P1: ['A', 'B']" in text  # P1's recorded state


def test_commutation_stepper_on_non_fifo_breaks_says_the_argument_fails_naming_the_message() -> (
    None
):
    cs = CommutationStepper(str(NON_FIFO))
    cs.last.click()
    text = explanation(cs)
    assert "argument fails" in text
    assert re.search(r"\bred message late\b", text)
    assert "early-receive" in text
    swap = trace(cs.view, commutation_module.TRACES, "swap")
    assert swap.marker.color == style.ILLEGAL
    assert not shows_sss(cs)
    assert inversions(cs) > 0


def test_commutation_stepper_summarises_an_execution_with_too_many_swaps() -> None:
    sim = red_before_white(25)  # 25 red actions before 25 white ones: 625 inversions
    cs = CommutationStepper(sim)
    assert cs.result.swaps is None
    assert cs.position.max == 0
    text = explanation(cs)
    assert "too many to animate" in text and "SSS" in text
    assert labels(cs) == [sim.trace.action_name(i) for i in cs.result.order]
    assert shows_sss(cs)


def test_commutation_stepper_figure_is_updated_in_place() -> None:
    cs = CommutationStepper(str(CONCURRENT), "s2")
    view, kept = cs.view, list(cs.view.data)
    for click in (cs.last, cs.back, cs.first, cs.forward):
        click.click()
        assert cs.view is view and all(a is b for a, b in zip(cs.view.data, kept, strict=True))


# ---------------------------------------------------------------- static pictures


def _displayed(fig: go.Figure, monkeypatch: pytest.MonkeyPatch, png: bytes | None) -> list[Any]:
    """What ``show_static`` displays in the notebook."""
    import IPython.display

    from snapshotlib.widgets import static

    shown: list[Any] = []
    monkeypatch.setattr(static, "static_png", lambda *a, **k: png)
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    static.show_static(fig, width=400)
    return shown


def test_a_static_picture_is_a_png_which_untrusted_notebooks_show(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    import IPython.core.formatters

    shown = _displayed(fig, monkeypatch, b"\x89PNG\r\n\x1a\n...")
    assert len(shown) == 1
    mimes, _ = IPython.core.formatters.DisplayFormatter().format(shown[0])
    assert "image/png" in mimes and "image/svg+xml" not in mimes


def test_without_a_renderer_a_plain_figure_is_shown_live_and_a_widget_not_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    shown = _displayed(fig, monkeypatch, None)
    assert len(shown) == 1 and type(shown[0]) is go.Figure, "the figure itself, drawn live"
    assert _displayed(go.FigureWidget(fig), monkeypatch, None) == []


def test_a_renderer_that_never_answers_costs_one_backstop_then_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """kaleido once waited for good on a browser that never started: the lesson's cell
    must go on, with the figure shown live, and later pictures must not wait again."""
    import sys
    import threading
    import types

    from snapshotlib.widgets import static

    never = threading.Event()
    calls: list[int] = []

    def hang(*args: Any, **kwargs: Any) -> bytes:
        calls.append(1)
        never.wait()
        return b""

    monkeypatch.setitem(sys.modules, "kaleido", types.ModuleType("kaleido"))
    monkeypatch.setattr(static.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(static, "RENDER_BACKSTOP", 0.2)
    monkeypatch.setattr(static, "_stuck", threading.Event())
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    monkeypatch.setattr(type(fig), "to_image", hang)
    try:
        assert static.static_png(fig) is None
        assert static.static_png(fig) is None
        assert calls == [1], "the second picture waited on the stuck renderer again"
    finally:
        never.set()


def test_static_png_makes_a_real_png_where_chromium_is_installed() -> None:
    from snapshotlib.widgets import static_png

    if importlib.util.find_spec("kaleido") is None or not Path("/usr/bin/chromium").exists():
        pytest.skip("kaleido draws with Chromium, which is not installed here")
    png = static_png(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), width=300, height=200)
    assert png is not None and png.startswith(b"\x89PNG\r\n\x1a\n")


# ---------------------------------------------------------------- first draw


def test_until_a_view_has_drawn_the_browser_copy_is_the_whole_current_figure() -> None:
    # a busy browser loads the widget's JavaScript late and loses the changes sent
    # before; a view drawn then must still show the figure as it is now
    ex = Explorer(TOKEN_RING)
    for _ in range(4):
        ex.step_once()
    for view in (ex.network_view, ex.spacetime_view):
        assert view._widget_data == view._data
        assert view._widget_layout == view._layout_obj._props


def test_once_a_view_has_drawn_only_the_changes_are_sent() -> None:
    ex = Explorer(TOKEN_RING)
    view = ex.network_view
    view._js2py_layoutDelta = {"layout_delta": {}, "layout_edit_id": 0}  # the view drew
    before = view._widget_data
    ex.step_once()
    ex.step_once()
    assert view._widget_data is before, "the whole figure is not written again"
    assert view._widget_data != view._data


def test_when_the_first_view_draws_the_whole_figure_is_sent_once_as_changes() -> None:
    # A busy browser may draw the figure as it was when the widget opened (messages that
    # came before its model existed there are dropped): the first view's report of its
    # drawing brings the whole figure again, once.
    ex = Explorer(TOKEN_RING)
    for _ in range(3):
        ex.step_once()
    view = ex.spacetime_view
    sent: list[tuple[str, object]] = []
    names = ["_py2js_deleteTraces", "_py2js_addTraces", "_py2js_relayout"]
    view.observe(lambda c: c["new"] is not None and sent.append((c["name"], c["new"])), names)
    kept = list(view.data)

    view._js2py_traceDeltas = {"trace_deltas": [], "trace_edit_id": 0}  # the view drew
    assert [name for name, _ in sent] == names
    assert sent[1][1]["trace_data"] == view._data  # type: ignore[index]
    assert sent[2][1]["relayout_data"]["title"] == view._layout_obj._props["title"]  # type: ignore[index]
    assert all(a is b for a, b in zip(view.data, kept, strict=True)), "the figure is kept"

    sent.clear()
    view._js2py_layoutDelta = {"layout_delta": {}, "layout_edit_id": 0}  # its next report
    view._js2py_traceDeltas = {"trace_deltas": [], "trace_edit_id": 1}
    assert sent == [], "once only"


# ====================================================== search counterexamples
def test_a_search_counterexample_steps_through_the_explorer_and_the_stepper() -> None:
    """The shortest non-FIFO run that breaks Chandy–Lamport, as the search hands it
    over: the Explorer steps through it to the broken snapshot, the CommutationStepper
    reorders it, and a learner's class is replayed from the violation's own run."""
    from snapshotlib.algorithms import ChandyLamport
    from snapshotlib.checks import check_snapshot
    from snapshotlib.course.exercises.ex02 import explore_failing_run
    from snapshotlib.course.exhaustive import three_processes
    from snapshotlib.search import search
    from snapshotlib.widgets import CommutationStepper

    result = search(three_processes(fifo=False))
    assert result.violation is not None
    ex = Explorer(result.scenario())
    for _ in range(result.violation.depth):  # the run's steps, as written
        assert ex.step_once()
    assert len(ex.sim.trace.actions) == result.violation.depth
    assert ex.sim.snapshot("s1").complete
    assert not check_snapshot(ex.sim, "s1").ok
    stepper = CommutationStepper(result.scenario())
    assert stepper.result.holds  # the cut is consistent; the recorded channel is not

    class Forgetful(ChandyLamport):  # records nothing on its channels
        def on_app_receive(self, channel: int, message: int) -> None:
            return None

    opened = explore_failing_run(Forgetful)
    assert isinstance(opened, Explorer)
    assert opened.sim.trace.actions == []  # rewound, ready to take again
    redo = opened.button("Redo")
    redo.click()
    redo.click()
    assert len(opened.sim.trace.actions) == 2
    opened.button("Reset").click()  # a new run of the same class
    assert opened.sim.trace.actions == [] and isinstance(opened.sim.algorithm, Forgetful)


def test_a_failing_run_search_in_the_notebook_stops_at_its_limit_and_says_so() -> None:
    from snapshotlib.algorithms import ChandyLamport
    from snapshotlib.course.exercises.ex02 import PUBLIC_SEARCH, search_system
    from snapshotlib.course.exercises.searching import open_failing_run

    system = search_system(ChandyLamport, PUBLIC_SEARCH)
    said = open_failing_run(system, max_states=20)
    assert isinstance(said, str) and said.startswith("no failing run in the first 20 states")
    whole = open_failing_run(system)
    assert isinstance(whole, str) and whole.startswith("every interleaving holds")


def test_the_renderers_own_error_logs_stay_out_of_the_lesson(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # choreographer (under kaleido) logs a traceback for a message it then ignores; in a
    # notebook that shows in red under a picture that came out right
    import logging

    from snapshotlib.widgets import static

    static.quiet_renderer()
    logging.getLogger("choreographer.channels.pipe").exception("JSONError decoding message")
    logging.getLogger("kaleido").error("a renderer's complaint")
    assert capsys.readouterr().err == ""
    assert not logging.getLogger("choreographer.channels.pipe").isEnabledFor(logging.CRITICAL)
    assert logging.getLogger("snapshotlib").isEnabledFor(logging.ERROR)  # others unchanged
