"""Scenario files: an execution written by hand as JSON.

The format (the files in ``examples/scenarios/`` are examples)::

    {"name": "token-ring", "processes": ["P1", "P2", "P3"],
     "channels": "complete", "fifo": true, "app": "tokens",
     "initial": {"P1": 1, "P2": 0, "P3": 0},
     "algorithm": {"name": "chandy-lamport"},
     "steps": [{"do": "internal", "at": "P1", "label": "A"},
               {"do": "send", "from": "P1", "to": "P2", "label": "B", "payload": 1},
               {"do": "snapshot", "at": "P1", "id": "s1"},
               {"do": "deliver", "from": "P1", "to": "P2", "label": "C"},
               {"do": "run", "scheduler": "random", "seed": 7}]}

* ``channels``: ``"complete"`` (the default), ``"ring"``, or a list of ``[src, dst]``
  pairs; ``fifo`` defaults to true.
* ``app``: ``"events"`` (the default; a process's state is the list of its event
  labels), ``"tokens"`` (a send's payload moves tokens), ``"bank"`` or ``"requests"``.
* ``algorithm``: ``{"name": "chandy-lamport"}`` (the default), ``"lai-yang"``, or
  ``"clock"`` with ``at`` (the local time to record at) and optional ``rate``,
  ``offset``, ``id``.
* ``deliver`` takes the head of the channel; on a non-FIFO channel ``"msg": LABEL`` or
  ``"marker": ID`` picks which message. ``label`` names the receive event.
* ``snapshot`` starts a snapshot at a process; several steps may start the same ``id``
  (several initiators) or different ids (concurrent snapshots).
* ``run`` lets a scheduler finish every pending delivery: ``"random"`` with ``seed``, or
  ``"fifo-order"`` (the default).
* ``search`` (optional) says what ``snapshotlib search`` explores after the steps; see
  :mod:`snapshotlib.search.system`.

Every error names the file, the step and what was expected (:class:`ScenarioError`).

>>> sc = parse_scenario({
...     "processes": ["P1", "P2"], "app": "tokens", "initial": {"P1": 1},
...     "steps": [{"do": "send", "from": "P1", "to": "P2", "label": "B", "payload": 1},
...               {"do": "snapshot", "at": "P2", "id": "s1"},
...               {"do": "run"}]})
>>> sim = run_scenario(sc)
>>> sim.snapshot("s1").channels["P1->P2"][0].label
'B'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..actions import Action, Deliver, Internal, Send, StartSnapshot
from ..algorithms import ClockSnapshot, SnapshotAlgorithm, SnapshotError, algorithm_class
from ..apps import APPLICATIONS, AppError
from ..model import Network, NetworkError
from ..schedulers import make_scheduler
from ..shipped import SCENARIOS, find, not_shipped
from ..simulator import ActionError, Simulator

#: The course's example scenarios (``examples/scenarios/`` in the repository), package
#: data, so an installed package has them too: ``load_scenario("token-ring")``.
EXAMPLES = SCENARIOS


class ScenarioError(ValueError):
    """A scenario that cannot be read or run; the message names the file and step."""


@dataclass(frozen=True)
class RunStep:
    """``{"do": "run"}``: let a scheduler deliver everything still in flight."""

    scheduler: str = "fifo-order"
    seed: int | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    network: Network
    app: str
    initial: Mapping[str, Any]
    steps: tuple[Action | RunStep, ...]
    algorithm: Mapping[str, Any] = field(default_factory=dict)
    source: str = "<scenario>"
    #: the ``search`` section as written (read by :mod:`snapshotlib.search`)
    search: Mapping[str, Any] = field(default_factory=dict)

    def _checking_algorithm(self) -> SnapshotAlgorithm:
        """An algorithm instance to check the scenario with: its clock snapshot, whose
        parameters need checking, or else one that takes no snapshot."""
        try:
            if self.algorithm.get("name") == "clock":
                return _algorithm(self.algorithm)
        except SnapshotError as e:
            raise ScenarioError(f"{self.source}: {e}") from None
        return SnapshotAlgorithm()

    def simulator(
        self, algorithm: SnapshotAlgorithm | Callable[[], SnapshotAlgorithm] | None = None
    ) -> Simulator:
        """A fresh simulator for this scenario, before any step; under ``algorithm`` if
        given, else the scenario's own."""
        try:
            chosen = algorithm if algorithm is not None else _algorithm(self.algorithm)
            return Simulator(self.network, self.app, self.initial, chosen)
        except (AppError, ActionError, SnapshotError) as e:
            raise ScenarioError(f"{self.source}: {e}") from None


_STEP_FIELDS = {
    "internal": ({"at"}, {"label"}),
    "send": ({"from", "to"}, {"label", "payload"}),
    "deliver": ({"from", "to"}, {"label", "msg", "marker"}),
    "snapshot": ({"at"}, {"id"}),
    "run": (set(), {"scheduler", "seed"}),
}
_TOP_FIELDS = {
    "name",
    "processes",
    "channels",
    "fifo",
    "app",
    "initial",
    "steps",
    "algorithm",
    "description",
    "search",
}


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file, or the shipped example of that name (``"token-ring"``: see
    :mod:`snapshotlib.shipped`); :class:`ScenarioError` names the file and what is wrong."""
    path = find(path, SCENARIOS)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read: {e.strerror}{not_shipped(path)}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(
            f"{path}, line {e.lineno}, column {e.colno}: invalid JSON: {e.msg}"
        ) from None
    return parse_scenario(data, source=str(path))


def reject_unknown_fields(
    data: Mapping[str, Any],
    allowed: AbstractSet[str],
    where: str,
    *,
    expected: str = "allowed:",
    shown: AbstractSet[str] | None = None,
) -> None:
    """A :class:`ScenarioError` naming ``where`` and the fields of ``data`` that are not
    ``allowed`` (a misspelt field is a mistake to say, not to ignore), with the fields
    that are (``shown``, default: ``allowed``)."""
    unknown = set(data) - set(allowed)
    if unknown:
        raise ScenarioError(
            f"{where}: unknown field(s) {', '.join(sorted(unknown))}; "
            f"{expected} {', '.join(sorted(allowed if shown is None else shown))}"
        )


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate a decoded scenario document."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: expected a JSON object at the top level")
    reject_unknown_fields(data, _TOP_FIELDS, source, expected="expected some of")
    processes = data.get("processes")
    if not isinstance(processes, list) or not processes:
        raise ScenarioError(f"{source}: field 'processes' must be a non-empty list of names")
    fifo = data.get("fifo", True)
    if not isinstance(fifo, bool):
        raise ScenarioError(f"{source}: field 'fifo' must be true or false, got {fifo!r}")
    try:
        network = Network(processes, data.get("channels", "complete"), fifo=fifo)
    except NetworkError as e:
        raise ScenarioError(f"{source}: {e}") from None
    app = data.get("app", "events")
    if app not in APPLICATIONS:
        raise ScenarioError(
            f"{source}: field 'app' is {app!r}; expected one of {', '.join(APPLICATIONS)}"
        )
    initial = data.get("initial", {})
    if not isinstance(initial, dict):
        raise ScenarioError(f"{source}: field 'initial' must be an object mapping process to value")
    for p in initial:
        if p not in network.processes:
            raise ScenarioError(f"{source}: field 'initial' names unknown process {p!r}")
    algorithm = data.get("algorithm", {})
    if not isinstance(algorithm, dict):
        raise ScenarioError(
            f'{source}: field \'algorithm\' must be an object like {{"name": "clock", "at": 5}}'
        )
    steps_data = data.get("steps", [])
    if not isinstance(steps_data, list):
        raise ScenarioError(f"{source}: field 'steps' must be a list")
    steps = tuple(parse_step(s, k + 1, network, source) for k, s in enumerate(steps_data))
    scenario = Scenario(
        str(data.get("name", Path(source).stem)),
        network,
        app,
        dict(initial),
        steps,
        algorithm,
        source,
        _search_section(data.get("search", {}), source),
    )
    # the algorithm's fields and the initial values are checked now, not mid-run; only a
    # clock snapshot's parameters need an instance (the others take none, and an exercise's
    # learner edition may lack their code)
    try:
        _check_algorithm(algorithm)
    except SnapshotError as e:
        raise ScenarioError(f"{source}: {e}") from None
    scenario.simulator(scenario._checking_algorithm())
    return scenario


def _search_section(section: Any, source: str) -> dict[str, Any]:
    if not isinstance(section, dict):
        raise ScenarioError(
            f'{source}: field \'search\' must be an object like {{"sends": 2, "depth": 40}}'
        )
    return dict(section)


def parse_step(step: Any, number: int, net: Network, source: str) -> Action | RunStep:
    """One step of a scenario (``number`` counts from 1, for the error messages)."""
    where = f"{source}: step {number}"
    if not isinstance(step, dict) or "do" not in step:
        raise ScenarioError(f"{where}: expected an object with a 'do' field, got {step!r}")
    do = step["do"]
    if do not in _STEP_FIELDS:
        raise ScenarioError(
            f"{where}: unknown 'do' {do!r}; expected one of {', '.join(_STEP_FIELDS)}"
        )
    required, optional = _STEP_FIELDS[do]
    where = f"{where} ({do})"
    missing = required - set(step)
    if missing:
        raise ScenarioError(f"{where}: missing field(s) {', '.join(sorted(missing))}")
    reject_unknown_fields(step, required | optional | {"do"}, where, shown=required | optional)
    for key in ("at", "from", "to"):
        if key in step and step[key] not in net.processes:
            raise ScenarioError(
                f"{where}: field '{key}' is {step[key]!r}, not one of the processes "
                f"{', '.join(net.processes)}"
            )
    label = step.get("label")
    if label is not None and not isinstance(label, str):
        raise ScenarioError(f"{where}: field 'label' must be a string")
    if do == "internal":
        return Internal(step["at"], label)
    if do == "send":
        return Send(step["from"], step["to"], step.get("payload"), label)
    if do == "snapshot":
        return StartSnapshot(step["at"], str(step.get("id", "s1")))
    if do == "deliver":
        try:
            channel = net.channel(step["from"], step["to"])
        except NetworkError as e:
            raise ScenarioError(f"{where}: {e}") from None
        pick = {k: step[k] for k in ("msg", "marker") if k in step}
        if len(pick) > 1:
            raise ScenarioError(f"{where}: give 'msg' or 'marker', not both")
        return _DeliverByName(channel, None, label, pick.get("msg"), pick.get("marker"))
    scheduler = step.get("scheduler", "fifo-order")
    seed = step.get("seed")
    if scheduler not in ("random", "fifo-order"):
        raise ScenarioError(
            f"{where}: field 'scheduler' is {scheduler!r}; expected 'random' or 'fifo-order'"
        )
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ScenarioError(f"{where}: field 'seed' must be an integer")
    return RunStep(scheduler, seed)


@dataclass(frozen=True)
class _DeliverByName(Deliver):
    """A scenario's deliver step, which may pick a message by label or a marker by id."""

    msg_label: str | None = None
    marker_id: str | None = None

    def resolve(self, sim: Simulator) -> Deliver:
        if self.msg_label is None and self.marker_id is None:
            return Deliver(self.channel, None, self.label)
        for m in sim.in_flight(self.channel):
            rec = sim.trace.messages[m]
            if self.msg_label is not None and rec.kind == "app" and rec.label == self.msg_label:
                return Deliver(self.channel, m, self.label)
            if self.marker_id is not None and rec.kind != "app" and rec.tag == self.marker_id:
                return Deliver(self.channel, m, self.label)
        what = (
            f"message {self.msg_label!r}"
            if self.msg_label is not None
            else f"marker {self.marker_id!r}"
        )
        names = [sim.trace.message_name(m) for m in sim.in_flight(self.channel)] or ["nothing"]
        raise ActionError(
            f"{what} is not in flight on {self.channel} (in flight: {', '.join(names)})"
        )


_ALGORITHM_FIELDS = {
    "chandy-lamport": {"name"},
    "lai-yang": {"name"},
    "clock": {"name", "at", "rate", "offset", "id"},
}


def _check_algorithm(spec: Mapping[str, Any]) -> str:
    """The name of the algorithm ``spec`` names; :class:`SnapshotError` if it names none,
    or has fields its algorithm does not take."""
    name = spec.get("name", "chandy-lamport")
    allowed = _ALGORITHM_FIELDS.get(name)
    if allowed is None:
        raise SnapshotError(
            f"field 'algorithm': unknown name {name!r}; "
            f"expected one of {', '.join(_ALGORITHM_FIELDS)}"
        )
    extra = set(spec) - allowed
    if extra:
        raise SnapshotError(
            f"field 'algorithm': unknown field(s) {', '.join(sorted(extra))} for {name!r}; "
            f"allowed: {', '.join(sorted(allowed))}"
        )
    if name == "clock" and "at" not in spec:
        raise SnapshotError("the clock algorithm needs 'at', the local time to record at")
    return str(name)


def _algorithm(spec: Mapping[str, Any]) -> SnapshotAlgorithm:
    name = _check_algorithm(spec)
    if name != "clock":
        return algorithm_class(name)()
    return ClockSnapshot(
        spec["at"], spec.get("rate"), spec.get("offset"), str(spec.get("id", "clock"))
    )


def step_action(step: Action, sim: Simulator) -> Action:
    """The action a scenario step other than ``run`` takes in ``sim``'s state now: a
    delivery that names its message by label or marker id finds it in flight
    (:class:`~snapshotlib.simulator.ActionError` if it is not there)."""
    return step.resolve(sim) if isinstance(step, _DeliverByName) else step


def play_steps(
    sim: Simulator,
    steps: Iterable[Action | RunStep],
    where: str,
    written: list[dict[str, Any]] | None = None,
) -> Simulator:
    """Take ``steps`` on ``sim`` in order: the one way scenario steps are played onto a
    run (a scenario, a search's prefix and counterexample). A step that cannot be taken
    is a :class:`ScenarioError` saying ``"{where} {number}: why"``. With ``written``,
    each step taken is appended to it as a scenario step naming what it took
    (:func:`~snapshotlib.formats.record.action_step`)."""
    if written is not None:
        from .record import action_step
    for number, step in enumerate(steps, start=1):
        try:
            if isinstance(step, RunStep):
                sim.run(make_scheduler(step.scheduler, step.seed))
                continue
            action = step_action(step, sim)
            if written is not None:
                written.append(action_step(action, sim))
            sim.step(action)
        except ActionError as e:
            raise ScenarioError(f"{where} {number}: {e}") from None
    return sim


def run_scenario(
    scenario: Scenario,
    until: int | None = None,
    algorithm: SnapshotAlgorithm | Callable[[], SnapshotAlgorithm] | None = None,
) -> Simulator:
    """Run the scenario's steps (the first ``until`` of them, default all), under
    ``algorithm`` if given (the same application actions in the same order; markers are
    still picked by snapshot id), else under the scenario's own."""
    sim = scenario.simulator(algorithm)
    play_steps(sim, scenario.steps[:until], f"{scenario.source}: step")
    sim.algorithm.finish()
    return sim
