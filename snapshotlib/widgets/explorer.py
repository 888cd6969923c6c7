"""The explorer: step a snapshot through a network, one atomic action at a time.

A thin controller: every control calls the engine (``step``, ``undo``, ``redo``) and
then :meth:`Explorer.refresh`, which recomputes the figures with the pure functions of
:mod:`snapshotlib.viz` and copies them into the figures on screen.
"""

from __future__ import annotations

import html
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w

from ..actions import Action, Deliver, Internal, Send, StartSnapshot
from ..formats.scenario import RunStep, Scenario, load_scenario, step_action
from ..model import Network
from ..schedulers import make_scheduler
from ..simulator import ActionError, Simulator
from ..text_colours import TEXT, WRONG
from ..viz import (
    network_figure,
    network_layout,
    network_spec,
    spacetime_figure,
    spacetime_spec,
    update_in_place,
)
from .common import (
    delivery_label,
    find_button,
    make_button,
    off_slide,
    row,
    state_table_html,
    widget_bundle,
)
from .figure_widget import figure_widget

#: above this many deliveries, buttons give way to a drop-down list
MAX_BUTTONS = 24


class Explorer:
    """Buttons for every enabled action, and live network and space-time views.

    Parameters
    ----------
    source
        A :class:`~snapshotlib.Simulator`, a :class:`~snapshotlib.Network` (the
        explorer makes a simulator with the ``app``), a scenario, or a scenario's path.
        A scenario's steps can be taken one by one with *Step* or *Play*; afterwards
        those deliver whatever is in flight in a random order set by the seed.
    app, initial
        For a bare network: the application and its initial values.
    seed
        Seed of the random choices of *Step* and *Play*.
    """

    def __init__(
        self,
        source: Simulator | Network | Scenario | str | Path,
        app: str = "tokens",
        initial: dict[str, Any] | None = None,
        seed: int = 0,
    ) -> None:
        self.script: tuple[Action | RunStep, ...] = ()
        if isinstance(source, (str, Path)):
            source = load_scenario(source)
        if isinstance(source, Scenario):
            self.scenario: Scenario | None = source
            self.script = source.steps
            scenario = source
            self._fresh: Callable[[], Simulator] = lambda: scenario.simulator()
        elif isinstance(source, Network):
            self.scenario = None
            net = source
            self._fresh = lambda: Simulator(net, app, initial)
        else:
            self.scenario = None
            self._fresh = _replayer(source)
        self.sim = self._fresh()
        self._marks: dict[int, int] = {0: 0}  # trace length -> scenario steps taken
        self._run_rng: dict[int, Any] = {}  # trace length -> a scenario run's generator state
        self.selected: str | None = None
        self._updating = False
        self.positions = network_layout(self.sim.network)
        self._build(seed)
        self.refresh()

    # ---------------------------------------------------------------- layout
    def _build(self, seed: int) -> None:
        procs = list(self.sim.network.processes)
        button = make_button
        self.reset_button = button("Reset", "fast-backward", "start again from the beginning")
        self.undo_button = button("Undo", "undo", "take back the last action")
        self.redo_button = button("Redo", "repeat", "take again the action undone")
        self.step_button = button("Step", "step-forward", "take the next action")
        self.play = w.Play(value=0, min=0, max=10**9, step=1, interval=600, description="Play")
        self.speed = w.IntSlider(
            value=600,
            min=100,
            max=2000,
            step=100,
            description="ms/step",
            layout=w.Layout(width="260px"),
        )
        w.link((self.speed, "value"), (self.play, "interval"))
        self.seed = w.IntText(value=seed, description="seed", layout=w.Layout(width="150px"))
        self.snapshot_choice = w.Dropdown(
            options=[], description="colour by", layout=w.Layout(width="220px")
        )
        self.deliveries = w.HBox(layout=w.Layout(flex_flow="row wrap"))
        self.delivery_list = w.Dropdown(options=[], layout=w.Layout(width="260px"))
        self.delivery_go = button("Deliver", "arrow-right", "deliver the chosen message")

        self.internal_at = w.Dropdown(
            options=procs, description="at", layout=w.Layout(width="160px")
        )
        self.internal_label = w.Text(
            placeholder="label", description="label", layout=w.Layout(width="170px")
        )
        self.internal_go = button("Internal event", "circle", "an internal event")
        self.send_from = w.Dropdown(
            options=procs, description="from", layout=w.Layout(width="160px")
        )
        self.send_to = w.Dropdown(options=[], description="to", layout=w.Layout(width="160px"))
        self.send_payload = w.Text(value="1", description="payload", layout=w.Layout(width="160px"))
        self.send_label = w.Text(
            placeholder="label", description="label", layout=w.Layout(width="170px")
        )
        self.send_go = button("Send", "paper-plane", "send a message")
        self.snap_at = w.Dropdown(options=procs, description="at", layout=w.Layout(width="160px"))
        self.snap_id = w.Text(value="s1", description="id", layout=w.Layout(width="140px"))
        self.snap_go = button("Start snapshot", "camera", "the process records its state")

        self.status = w.HTML()
        self.table = w.HTML(layout=w.Layout(min_width="300px", flex="1 1 320px"))
        # stable class names for notebooks' CSS and the browser tests
        network = network_figure(self.sim, None, self.positions)
        self.network_view = figure_widget(network, "explorer-network")
        self.spacetime_view = figure_widget(spacetime_figure(self.sim, None), "explorer-spacetime")

        self.reset_button.on_click(lambda _: self.reset())
        self.undo_button.on_click(lambda _: self.undo())
        self.redo_button.on_click(lambda _: self.redo())
        self.step_button.on_click(lambda _: self.step_once())
        self.play.observe(self._on_play, names="value")
        self.delivery_go.on_click(lambda _: self._deliver_chosen())
        self.internal_go.on_click(lambda _: self._internal())
        self.send_go.on_click(lambda _: self._send())
        self.snap_go.on_click(lambda _: self._snapshot())
        self.send_from.observe(lambda _: self._update_send_targets(), names="value")
        self.snap_at.observe(lambda _: self._propose_snapshot_id(), names="value")
        self.snapshot_choice.observe(self._on_choice, names="value")
        self._update_send_targets()

        act = row([w.HTML("<b>Act</b>"), self.internal_at, self.internal_label, self.internal_go])
        send = row([self.send_from, self.send_to, self.send_payload, self.send_label, self.send_go])
        self.widget = w.VBox(
            [
                row(
                    [
                        self.reset_button,
                        self.undo_button,
                        self.redo_button,
                        self.step_button,
                        self.play,
                        self.speed,
                        self.seed,
                    ]
                ),
                w.HTML(
                    "<b>Deliver</b> (the head of a channel)"
                    if self.sim.network.fifo
                    else "<b>Deliver</b> (any message in flight: the channels are not FIFO)"
                ),
                row([self.deliveries]),
                act,
                send,
                row([self.snap_at, self.snap_id, self.snap_go, self.snapshot_choice]),
                self.status,
                # side by side on a laptop; the table below the network on a projector
                row([self.network_view, self.table]),
                self.spacetime_view,
            ]
        )
        self.widget.add_class("snapshot-explorer")
        # a lecture's slide steps, delivers and starts snapshots, and shows the network
        # and the table; acting by hand, speed, seed and the space-time diagram (which
        # each lesson shows as a picture too) stay in the notebook
        off_slide(act, send, self.speed, self.seed, self.spacetime_view)
        # stable names for notebooks' CSS and the browser tests
        self.table.add_class("explorer-table")
        self.status.add_class("explorer-status")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        views = (self.network_view, self.spacetime_view)
        return widget_bundle(self.widget, "Explorer", views, **kwargs)

    # -------------------------------------------------------------- actions
    def take(self, action: Action) -> bool:
        """Take the learner's ``action``; a refused action is reported, not raised.

        The scenario's script goes on only while the learner does what it would do
        next; any other action leaves it, and *Step* and *Play* then choose among the
        actions enabled from the state the learner made (the status line says so).
        """
        scripted = self._next_scripted()
        if scripted is not None and _same_action(self.sim, scripted[0], action):
            return self._take(*scripted)
        pos = self._script_pos
        if pos >= len(self.script) or isinstance(self.script[pos], RunStep):
            return self._take(action, pos)  # off the script already, or in a run: stay
        note = (
            " — off the scenario's script from here: Step and Play choose among the "
            f"actions enabled now (seed {int(self.seed.value)})"
        )
        return self._take(action, len(self.script), note)

    def _take(self, action: Action, next_pos: int, note: str = "") -> bool:
        what = self._describe(action)
        try:
            self.sim.step(action)
        except ActionError as e:
            self._say(str(e), error=True)
            return False
        if isinstance(action, StartSnapshot):
            self.selected = action.snapshot_id
        self._marks[self.sim.time] = next_pos
        self._run_rng.pop(self.sim.time, None)
        self._say(f"did: {what}{note}")
        self.refresh()
        return True

    def _next_scripted(self) -> tuple[Action, int] | None:
        """The scenario's next action and the script position after it, if it is one."""
        pos = self._script_pos
        item = self.script[pos] if pos < len(self.script) else None
        if item is None or isinstance(item, RunStep):
            return None
        resolve = getattr(item, "resolve", None)
        try:
            action: Action = resolve(self.sim) if resolve else item
        except ActionError:
            return None
        return action, pos + 1

    def _describe(self, action: Action) -> str:
        """An action in words; a delivery says what arrives, as its button does."""
        if isinstance(action, Deliver):
            try:
                return f"deliver {delivery_label(self.sim, action)}"
            except (IndexError, ValueError):  # not enabled: step() will say why
                pass
        return str(action)

    @property
    def _script_pos(self) -> int:
        return self._marks.get(self.sim.time, 0)

    def step_once(self) -> bool:
        """The next scenario step, else a random delivery; ``False`` when nothing is left."""
        pos = self._script_pos
        while pos < len(self.script):
            item = self.script[pos]
            if isinstance(item, RunStep):
                if not self.sim.has_pending():
                    pos += 1
                    continue
                # the scenario's scheduler and seed, its generator carried from step to
                # step: stepping through a run gives the run that run_scenario gives
                seed = item.seed if item.seed is not None else int(self.seed.value)
                scheduler = make_scheduler(item.scheduler, seed)
                rng = getattr(scheduler, "rng", None)
                if rng is not None and self.sim.time in self._run_rng:
                    rng.setstate(self._run_rng[self.sim.time])
                action = scheduler.choose(self.sim)
                assert action is not None
                ok = self._take(action, pos)
                if ok and rng is not None:
                    self._run_rng[self.sim.time] = rng.getstate()
                return ok
            try:
                action = step_action(item, self.sim)
            except ActionError as e:
                self._say(f"scenario step {pos + 1}: {e}", error=True)
                return False
            return self._take(action, pos + 1)
        enabled = self.sim.enabled()
        if not enabled:
            self.play.playing = False
            self._say("nothing left to deliver")
            return False
        choice = random.Random(self._rng_seed()).choice(enabled)
        return self._take(choice, pos)

    def _rng_seed(self) -> int:
        # tied to the position in the run, so undo then step repeats the same choice
        return int(self.seed.value) * 1_000_003 + self.sim.time

    def undo(self) -> None:
        if self.sim.undo():
            self._say("undone")
        self.refresh()

    def redo(self) -> None:
        if self.sim.redo():
            self._say("redone")
        self.refresh()

    def record(self, path: str | Path, name: str = "explorer") -> bool:
        """Append the run so far to the JSON Lines file ``path`` as a scenario that
        replays it (``snapshotlib check-traces`` reads such files); ``False``, with the
        reason in the status line, when the run cannot be written as a scenario."""
        from ..formats.record import append_record
        from ..formats.scenario import ScenarioError

        try:
            append_record(self.sim, path, name)
        except (ScenarioError, OSError) as e:
            self._say(str(e), error=True)
            return False
        self._say(f"recorded {self.sim.time} actions to {path}")
        return True

    def reset(self) -> None:
        self.sim = self._fresh()
        self._marks = {0: 0}
        self._run_rng = {}
        self.selected = None
        self.play.playing = False
        self._say("reset")
        self.refresh()

    def _on_play(self, change: dict[str, Any]) -> None:
        if self.play.playing and not self.step_once():
            self.play.playing = False  # nothing left, or the next step was refused

    def _deliver_chosen(self) -> None:
        if self.delivery_list.value is not None:
            self.take(self.delivery_list.value)

    def _internal(self) -> None:
        self.take(Internal(self.internal_at.value, self.internal_label.value or None))

    def _send(self) -> None:
        if self.send_to.value is None:
            self._say(f"{self.send_from.value} has no output channel", error=True)
            return
        self.take(
            Send(
                self.send_from.value,
                self.send_to.value,
                _payload(self.send_payload.value),
                self.send_label.value or None,
            )
        )

    def _snapshot(self) -> None:
        self.take(StartSnapshot(self.snap_at.value, self.snap_id.value.strip() or "s1"))

    def _propose_snapshot_id(self) -> None:
        """Offer a fresh id when the chosen process has already recorded the one shown.

        A second initiator of the same snapshot keeps the id (several processes may
        start one snapshot); a process that took part in it gets the next free one, so
        *Start snapshot* works from whatever state the run is in.
        """
        shown = self.snap_id.value.strip() or "s1"
        taken = set(self.sim.snapshot_ids())
        if shown in taken and self.snap_at.value in self.sim.red_from(shown):
            self.snap_id.value = next(
                f"s{k}" for k in range(1, len(taken) + 2) if f"s{k}" not in taken
            )

    def _update_send_targets(self) -> None:
        src = self.send_from.value
        targets = [c.dst for c in self.sim.network.outputs(src)] if src else []
        self.send_to.options = targets
        self.send_to.value = targets[0] if targets else None

    def _on_choice(self, change: dict[str, Any]) -> None:
        if not self._updating and change["new"] != self.selected:
            self.selected = change["new"]
            self.refresh()

    def _say(self, text: str, error: bool = False) -> None:
        colour = WRONG if error else TEXT
        self.status.value = f"<span style='color:{colour}'>{html.escape(text)}</span>"

    # --------------------------------------------------------------- display
    def refresh(self) -> None:
        """Bring every view up to date with the simulator (figures updated in place)."""
        sim = self.sim
        ids = sim.snapshot_ids()
        if self.selected not in ids:
            self.selected = ids[-1] if ids else None
        self._updating = True  # our own changes to the drop-down are not the learner's
        try:
            if tuple(self.snapshot_choice.options) != tuple(ids):
                self.snapshot_choice.options = ids
            self.snapshot_choice.value = self.selected
        finally:
            self._updating = False
        update_in_place(self.network_view, network_spec(sim, self.selected, self.positions))
        update_in_place(self.spacetime_view, spacetime_spec(sim, self.selected))
        self.table.value = state_table_html(sim, self.selected)
        self._propose_snapshot_id()
        self._update_deliveries()
        self.undo_button.disabled = sim.time == 0
        self.redo_button.disabled = not sim._redo

    def _update_deliveries(self) -> None:
        enabled = self.sim.enabled()
        labelled = [(delivery_label(self.sim, a), a) for a in enabled]
        if len(labelled) <= MAX_BUTTONS:
            buttons = []
            for text, action in labelled:
                b = make_button(text, "arrow-right", f"deliver on {action.channel}")
                b.on_click(lambda _, a=action: self.take(a))
                buttons.append(b)
            self.deliveries.children = tuple(buttons) or (w.HTML("<i>nothing in flight</i>"),)
        else:
            self.delivery_list.options = labelled
            if self.delivery_list.value is None:  # ipywidgets leaves a first list unselected
                self.delivery_list.index = 0
            self.deliveries.children = (self.delivery_list, self.delivery_go)

    def button(self, description: str) -> w.Button:
        """The button with this description (for tests and notebooks)."""
        return find_button(self.widget, description)


def _delivered(sim: Simulator, action: Deliver) -> int | None:
    """The message a delivery would take: the one it names, else its channel's head."""
    if action.message is not None:
        return action.message
    queue = sim.queues[sim.network.channel_index(action.channel)]
    return queue[0] if queue else None


def _same_action(sim: Simulator, a: Action, b: Action) -> bool:
    """Whether ``a`` and ``b`` do the same thing now (a delivery: of the same message)."""
    if isinstance(a, Deliver) and isinstance(b, Deliver):
        return a.channel == b.channel and _delivered(sim, a) == _delivered(sim, b)
    return a == b


def _payload(text: str) -> Any:
    """A payload typed by the learner: a whole number if it reads as one."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return text or None


def _replayer(sim: Simulator) -> Any:
    """Reset for an explorer given a simulator: the same network, app and algorithm."""
    network, app, initial, algorithm = sim.network, sim.app, sim.initial, sim.algorithm
    first = [sim]

    def fresh() -> Simulator:
        if first:
            return first.pop()
        # a new instance: the given run's own is bound to that run
        return Simulator(network, app, initial, algorithm.fresh())

    return fresh
