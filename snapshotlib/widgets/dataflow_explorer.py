"""The dataflow explorer: run a streaming job step by step, trigger checkpoints, crash an
operator and restore, watching barriers, blocked inputs and operator state.

A thin controller over :class:`~snapshotlib.dataflow.StreamJob`: every control calls
the job (``step``, ``trigger``, ``crash``, ``restore``) and then
:meth:`DataflowExplorer.refresh`, which recomputes the figures with
:mod:`snapshotlib.viz.dataflow` and :mod:`snapshotlib.viz.checkpoints` and copies them
into the figures on screen. A status line says in words what the last action did; a
refused action is reported there, never raised.

The same methods the buttons call are there for notebooks, whose stored outputs must
come out the same on every run (the job is seeded)::

    ex = DataflowExplorer(StreamJob(word_count(), "aligned", seed=0))
    ex.run(20); ex.crash("C1"); ex.restore()
    show_static(ex.graph_view)
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as w

from ..dataflow import COMPLETED, FAILED, VARIANTS, JobError, StreamJob
from ..simulator import ActionError, Simulator
from ..text_colours import TEXT, WRONG
from ..trace import APP, CONTROL, INTERNAL, RECEIVE, InputBlocked, InputUnblocked, StateRecorded
from ..viz.checkpoints import registry_figure, registry_spec
from ..viz.dataflow import dataflow_figure, dataflow_spec, record_name
from ..viz.layered import dataflow_layout
from ..viz.update import update_in_place
from .common import find_button, make_button, off_slide, row, widget_bundle
from .figure_widget import figure_widget

#: lines of history kept in the log under the figures
LOG_LINES = 8
#: a bound on "Run to end", in case a job never finishes (it always should)
MAX_RUN = 100_000


@dataclass(frozen=True)
class _Before:
    """What the job looked like before an action, to say afterwards what changed."""

    sim: Simulator
    time: int
    messages: int
    #: how many typed events the trace held
    trace_events: int
    checkpoints: int
    events: int
    statuses: dict[str, str]

    @classmethod
    def of(cls, job: StreamJob) -> _Before:
        sim = job.sim
        return cls(
            sim,
            sim.time,
            len(sim.trace.messages),
            len(sim.trace.events),
            len(job.coordinator.entries),
            len(job.events),
            {cid: e.status for cid, e in job.coordinator.entries.items()},
        )


def _channel(sim: Simulator, index: int) -> str:
    return str(sim.network.channels[index])


def _what_was_done(job: StreamJob, before: _Before) -> list[str]:
    """The step itself in words: a source's read, or what an operator received."""
    sim = job.sim
    if sim is not before.sim or sim.time <= before.time:
        return []
    act = sim.trace.actions[before.time]
    messages = sim.trace.messages
    sent = [m for m in range(before.messages, len(messages)) if messages[m].sent_by == before.time]
    onward = ", ".join(
        f"{record_name(sim, m)} → {sim.network.channels[messages[m].channel].dst}"
        for m in sent
        if messages[m].kind == APP
    )
    if act.kind == INTERNAL:
        return [f"{act.process} read {onward}" if onward else f"{act.process} had nothing to read"]
    src = sim.network.channels[act.channel].src
    if act.kind == RECEIVE:
        got = f"{act.process} took {record_name(sim, act.message)} from {src}"
        return [f"{got}, sent on {onward}" if onward else got]
    if act.kind == CONTROL:
        msg = messages[act.message]
        got = f"{act.process} got {msg.kind} {msg.tag} from {src}"
        passed = [sim.network.channels[messages[m].channel].dst for m in sent]
        return [f"{got}, passed it on to {', '.join(passed)}" if passed else got]
    return []


def _what_changed(job: StreamJob, before: _Before) -> list[str]:
    """Alignment, recorded states, checkpoints triggered, completed or failed."""
    sim = job.sim
    out: list[str] = []
    same = sim is before.sim
    new_ids = [e.id for e in list(job.coordinator.entries.values())[before.checkpoints :]]
    if same:
        events = sim.trace.events[before.trace_events :]
        # the inputs blocked and unblocked by this step, as its events say (an input
        # blocked and released again within the step is neither)
        blocked: dict[int, str] = {}
        released: set[int] = set()
        for e in events:
            if isinstance(e, InputBlocked):
                if e.channel in released:
                    released.discard(e.channel)
                else:
                    blocked[e.channel] = e.snapshot_id
            elif isinstance(e, InputUnblocked):
                if e.channel in blocked:
                    del blocked[e.channel]
                else:
                    released.add(e.channel)
        for ch, tag in sorted(blocked.items()):
            reader = sim.network.channels[ch].dst
            out.append(f"{reader} blocked {_channel(sim, ch)} (barrier {tag} arrived)")
        recorded: dict[str, set[str]] = {}
        for e in events:
            if isinstance(e, StateRecorded) and e.snapshot_id not in new_ids:
                recorded.setdefault(e.snapshot_id, set()).add(e.process)
        for cid, processes in recorded.items():
            out += [f"{p} recorded its state for {cid}" for p in sorted(processes)]
        if released:
            out.append(f"unblocked {', '.join(_channel(sim, ch) for ch in sorted(released))}")
    for cid in new_ids:
        out.append(f"checkpoint {cid} triggered: barriers at {', '.join(job.flow.sources)}")
    out += [text for _, text in job.events[before.events :]]
    return out


def _checkpoint_summary(job: StreamJob, before: _Before) -> list[str]:
    """Checkpoints triggered, completed and failed since ``before``, a line each."""
    entries = list(job.coordinator.entries.values())
    out = []
    triggered = [e.id for e in entries[before.checkpoints :]]
    if triggered:
        out.append(f"triggered {', '.join(triggered)}")
    for status in (COMPLETED, FAILED):
        ended = [e for e in entries if e.status == status and before.statuses.get(e.id) != status]
        if ended:
            why = {e.reason for e in ended if e.reason}
            out.append(
                f"{status} {', '.join(e.id for e in ended)}"
                + (f" ({'; '.join(sorted(why))})" if why else "")
            )
    return out


class DataflowExplorer:
    """Buttons to run a streaming job, and live views of its graph and its registry.

    Parameters
    ----------
    job
        The :class:`~snapshotlib.dataflow.StreamJob` to drive (it may have run already).
    seed
        The seed the *Reset* button starts a fresh job with (its box can be changed).
    run_steps
        How many steps the *Run* button takes (its box can be changed).

    Attributes
    ----------
    job
        The job on screen (a new one after :meth:`reset`).
    graph_view, registry_view
        The ``FigureWidget`` s of the graph and of the checkpoint registry, updated in
        place (usable with :func:`~snapshotlib.widgets.show_static`).
    status
        The line saying what the last action did.
    history
        Everything the status line has said since the start (or the last reset),
        oldest first, refusals left out; the log under the figures shows the newest.
    """

    def __init__(self, job: StreamJob, seed: int = 0, run_steps: int = 10) -> None:
        self.job = job
        self.positions = dataflow_layout(job.flow)
        self.history: list[str] = []
        self._build(seed, run_steps)
        self.refresh()

    # ---------------------------------------------------------------- layout
    def _build(self, seed: int, run_steps: int) -> None:
        ops = list(self.job.network.processes)
        kinds = self.job.app.kind
        button = make_button
        self.step_button = button("Step", "step-forward", "one step: a read or a delivery")
        self.run_steps = w.BoundedIntText(
            value=run_steps,
            min=1,
            max=MAX_RUN,
            description="steps",
            layout=w.Layout(width="150px"),
        )
        self.run_button = button("Run", "forward", "take that many steps")
        self.run_all_button = button("Run to end", "fast-forward", "run until nothing is left")
        self.play = w.Play(value=0, min=0, max=10**9, step=1, interval=500, description="Play")
        self.trigger_button = button("Trigger checkpoint", "camera", "barriers at every source")
        self.crash_choice = w.Dropdown(
            options=ops,
            value=next((p for p in ops if kinds[p] == "count"), ops[0]),
            description="crash",
            layout=w.Layout(width="170px"),
        )
        self.crash_button = button("Crash", "bolt", "the chosen operator fails; the job halts")
        self.restore_button = button(
            "Restore", "history", "roll back to the last COMPLETED checkpoint and resume"
        )
        self.variant = w.Dropdown(
            options=VARIANTS,
            value=self.job.variant,
            description="variant",
            layout=w.Layout(width="240px"),
        )
        self.seed = w.IntText(value=seed, description="seed", layout=w.Layout(width="140px"))
        self.reset_button = button("Reset", "fast-backward", "a fresh job: this variant and seed")

        self.status = w.HTML()
        self.log = w.HTML(layout=w.Layout(min_width="260px", flex="1 1 auto"))
        graph = dataflow_figure(self.job, None, self.positions)
        self.graph_view = figure_widget(graph, "dataflow-graph")
        self.registry_view = figure_widget(registry_figure(self.job), "dataflow-registry")

        self.step_button.on_click(lambda _: self.step_once())
        self.run_button.on_click(lambda _: self.run(int(self.run_steps.value)))
        self.run_all_button.on_click(lambda _: self.run())
        self.play.observe(self._on_play, names="value")
        self.trigger_button.on_click(lambda _: self.trigger())
        self.crash_button.on_click(lambda _: self.crash(str(self.crash_choice.value)))
        self.restore_button.on_click(lambda _: self.restore())
        self.reset_button.on_click(lambda _: self.reset())

        tables = row([self.registry_view, self.log])
        self.widget = w.VBox(
            [
                row(
                    [
                        self.step_button,
                        self.run_steps,
                        self.run_button,
                        self.run_all_button,
                        self.play,
                        self.trigger_button,
                    ]
                ),
                row(
                    [
                        self.crash_choice,
                        self.crash_button,
                        self.restore_button,
                        self.variant,
                        self.seed,
                        self.reset_button,
                    ]
                ),
                self.status,
                self.graph_view,
                tables,
            ]
        )
        # a lecture's slide steps, triggers, crashes and restores, and shows the graph;
        # the registry and log (lesson 08 prints the registry where it asks about it),
        # variant, seed and reset stay in the notebook
        off_slide(tables, self.variant, self.seed, self.reset_button)
        # stable names for notebooks' CSS and the browser tests
        self.widget.add_class("dataflow-explorer")
        self.status.add_class("dataflow-status")
        self.log.add_class("dataflow-log")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        views = (self.graph_view, self.registry_view)
        return widget_bundle(self.widget, "DataflowExplorer", views, **kwargs)

    # -------------------------------------------------------------- actions
    def step_once(self) -> bool:
        """One step of the job (chosen by its seeded scheduler); ``False`` if none was
        taken (the job is halted or has finished)."""
        if self._halted():
            return False
        before = _Before.of(self.job)
        try:
            action = self.job.step()
        except (JobError, ActionError) as e:
            self._say(str(e), error=True)
            return False
        if action is None:
            self.play.playing = False
            self._say("nothing left to do: every source is read and nothing is in flight")
            return False
        parts = _what_was_done(self.job, before) + _what_changed(self.job, before)
        self._say(f"step {self.job.steps}: " + "; ".join(parts))
        return True

    def run(self, n: int | None = None) -> int:
        """Take up to ``n`` steps (all that are left when ``None``); returns how many."""
        if self._halted():
            return 0
        before = _Before.of(self.job)
        start = self.job.steps
        limit = MAX_RUN if n is None else n
        try:
            while self.job.steps - start < limit and self.job.step() is not None:
                pass
        except (JobError, ActionError) as e:
            self._say(str(e), error=True)
            return self.job.steps - start
        taken = self.job.steps - start
        if taken == 0:
            self._say("nothing left to do: every source is read and nothing is in flight")
            return 0
        parts = [f"ran {taken} step{'s' if taken != 1 else ''} (now step {self.job.steps})"]
        parts += _checkpoint_summary(self.job, before)
        sim = self.job.sim
        if sim.blocked:
            parts.append("blocked now: " + ", ".join(_channel(sim, c) for c in sorted(sim.blocked)))
        if taken < limit:
            parts.append("the job has finished")
        self._say("; ".join(parts))
        return taken

    def trigger(self) -> str | None:
        """Start a checkpoint now; returns its id (``None`` if refused: a halted job)."""
        if self._halted():
            return None
        cid = self.job.trigger()
        sources = ", ".join(self.job.flow.sources)
        self._say(
            f"checkpoint {cid} triggered at step {self.job.steps}: {sources} recorded "
            "their offsets and sent a barrier on every output"
        )
        return cid

    def crash(self, process: str) -> bool:
        """``process`` fails: the job halts and unfinished checkpoints FAIL. ``False``
        (and a message) if it cannot: already crashed, or no such operator."""
        try:
            failed = self.job.crash(process)
        except JobError as e:
            self._say(str(e), error=True)
            return False
        lost = "; ".join(f"{cid} FAILED: {process} crashed" for cid in failed)
        self._say(
            f"{process} crashed at step {self.job.steps}"
            + (f"; {lost}" if lost else "; no checkpoint was in progress")
            + "; the job is halted until Restore"
        )
        return True

    def restore(self) -> bool:
        """Roll back to the last COMPLETED checkpoint and resume; ``False`` (and a
        message) when the job has not crashed."""
        if not self.job.crashed:
            self._say(
                "nothing to restore: the job is running (crash an operator first)", error=True
            )
            return False
        info = self.job.restore()
        states = self.job.sim.states
        offsets = ", ".join(f"{s} {states[s]}" for s in self.job.flow.sources)
        if info["from"] is None:
            text = "restored from the start (no checkpoint had COMPLETED)"
        else:
            n = info["replayed"]
            text = f"restored from {info['from']}: {n} record{'s' if n != 1 else ''} replayed"
        text += f"; sources re-read from offsets {offsets}"
        duplicates = len(info["predicted_duplicates"])
        if duplicates:
            text += f"; {duplicates} record(s) will reach the sink twice (at-least-once)"
        lost = len(info["predicted_lost"])
        if lost:
            text += f"; {lost} record(s) on the loop are lost (at-least-once logs no back edge)"
        self._say(text)
        return True

    def reset(self, variant: str | None = None, seed: int | None = None) -> None:
        """Start a fresh job on the same graph and settings (variant and seed from the
        controls unless given)."""
        if variant is not None:
            self.variant.value = variant
        if seed is not None:
            self.seed.value = seed
        old = self.job
        self.play.playing = False
        options: dict[str, Any] = {}
        if hasattr(old, "max_concurrent"):
            options["max_concurrent"] = old.max_concurrent
        algorithm = getattr(old, "algorithm_class", None)
        if algorithm is not None and self.variant.value == old.variant:
            options["algorithm"] = algorithm  # a custom implementation of this variant
        self.job = StreamJob(
            old.flow,
            str(self.variant.value),
            seed=int(self.seed.value),
            interval=old.interval,
            ttl=old.coordinator.ttl,
            capacity=old.capacity,
            record_bytes=old.app.record_bytes,
            **options,
        )
        self.history = []
        self._say(f"a fresh {self.job.variant} job, seed {self.seed.value}")

    def _halted(self) -> bool:
        if self.job.crashed:
            self.play.playing = False
            self._say(
                f"the job is halted ({self.job.crashed} crashed): press Restore first", error=True
            )
            return True
        return False

    def _on_play(self, change: dict[str, Any]) -> None:
        if self.play.playing and not self.step_once():
            self.play.playing = False

    def _say(self, text: str, error: bool = False) -> None:
        """Show what happened, log it, and bring every view up to date."""
        colour = WRONG if error else TEXT
        self.status.value = f"<span style='color:{colour}'>{html.escape(text)}</span>"
        if not error:
            self.history.append(text)
        self.refresh()

    # --------------------------------------------------------------- display
    def refresh(self) -> None:
        """Bring every view up to date with the job (figures updated in place)."""
        job = self.job
        update_in_place(self.graph_view, dataflow_spec(job, None, self.positions))
        update_in_place(self.registry_view, registry_spec(job))
        items = "".join(f"<li>{html.escape(t)}</li>" for t in reversed(self.history[-LOG_LINES:]))
        self.log.value = (
            f"<div class='dataflow-history'><b>What happened</b> (newest first)<ol reversed>"
            f"{items}</ol></div>"
            if items
            else "<i>Nothing yet: press Step, Run or Trigger checkpoint.</i>"
        )
        halted = job.crashed is not None
        self.crash_button.disabled = halted
        self.restore_button.disabled = not halted
        for b in (self.step_button, self.run_button, self.run_all_button, self.trigger_button):
            b.disabled = halted

    def button(self, description: str) -> w.Button:
        """The button with this description (for tests and notebooks)."""
        return find_button(self.widget, description)
