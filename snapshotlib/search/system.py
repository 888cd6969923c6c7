"""What an exhaustive search explores: a :class:`System`.

A system is a network, an application, initial values and a snapshot algorithm, a
*prefix* of actions taken first as written, and then what each process may still do on
its own: its **program** (sends, internal events, snapshot initiations, taken in order,
each whenever the search likes) and the **snapshot plans** (a snapshot id started at
any one of some processes, or at each of them, at any moment). Deliveries are never
written down: whatever is in flight may be delivered at any moment (on a FIFO channel
the head; on a non-FIFO channel any message). The search tries every order of all of
this.

From a scenario file (:func:`system_of_scenario`):

* without a ``search`` section, the scenario's own steps become the programs: each
  process's sends, internal events and snapshot initiations in the order written, its
  deliveries and ``run`` steps left to the search ("every schedule of this scenario");
* with one, the steps are the prefix, and the section says what follows::

    "search": {"sends": 2,                    # each process sends 2 messages, to its
                                              # outputs in turn (payload 1 in token and
                                              # bank apps), or:
               "programs": [{"do": "send", "from": "P1", "to": "P2", "payload": 1}, ...],
               "snapshots": [{"id": "s1", "at": "any", "initiators": "one"}],
               "depth": 40}                   # at most 40 actions after the prefix

  ``snapshots`` defaults to one snapshot ``s1`` started by any one process (``"at"``
  lists the processes that may start it, ``"any"`` for all; ``"initiators": "all"``
  makes each of them start it unless a marker made it record first).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..actions import Action, Deliver, Send, StartSnapshot
from ..algorithms.base import SnapshotAlgorithm
from ..apps import Application, make_app
from ..formats.scenario import (
    RunStep,
    Scenario,
    ScenarioError,
    parse_step,
    play_steps,
    reject_unknown_fields,
)
from ..model import Network
from ..simulator import Simulator

AlgorithmFactory = Callable[[], SnapshotAlgorithm]

_SEARCH_FIELDS = {"sends", "programs", "snapshots", "depth"}
_PLAN_FIELDS = {"id", "at", "initiators"}


@dataclass(frozen=True)
class SnapshotPlan:
    """Snapshot ``snapshot_id`` is started at one of ``at`` (``initiators="one"``) or at
    each of them (``"all"``), whenever the search likes."""

    snapshot_id: str
    at: tuple[str, ...]
    initiators: str = "one"

    def __str__(self) -> str:
        who = "any one of" if self.initiators == "one" else "each of"
        return f"{self.snapshot_id} started by {who} {', '.join(self.at)}"


@dataclass(frozen=True)
class System:
    """A network and what its processes may do; see the module docstring.

    Parameters
    ----------
    network, app, initial
        As for :class:`~snapshotlib.simulator.Simulator`.
    algorithm
        A class or factory: each run gets a new instance.
    prefix
        Actions taken first, as written (scenario deliveries may name their message).
    programs
        Per process, its own actions in order (:class:`Send`, :class:`Internal`,
        :class:`StartSnapshot`); each is taken when the search chooses.
    snapshots
        Snapshot plans (:class:`SnapshotPlan`).
    depth
        At most this many actions after the prefix (``None``: no bound).
    """

    network: Network
    app: str | Application
    initial: Mapping[str, Any]
    algorithm: AlgorithmFactory
    prefix: tuple[Action, ...] = ()
    programs: Mapping[str, tuple[Action, ...]] = field(default_factory=dict)
    snapshots: tuple[SnapshotPlan, ...] = ()
    depth: int | None = None
    name: str = "system"

    def start(self) -> Simulator:
        """A simulator after the prefix: where the search starts."""
        sim = Simulator(self.network, self.app, self.initial, self.algorithm)
        return play_steps(sim, self.prefix, f"{self.name}: prefix step")

    def describe(self) -> str:
        """One line: processes, channels, what they do."""
        sends = sum(isinstance(a, Send) for prog in self.programs.values() for a in prog)
        parts = [
            f"{len(self.network.processes)} processes",
            f"{len(self.network.channels)} {'FIFO' if self.network.fifo else 'non-FIFO'} channels",
            f"{sends} sends",
        ]
        parts += [str(plan) for plan in self.snapshots]
        if self.prefix:
            parts.append(f"after a prefix of {len(self.prefix)} steps")
        return ", ".join(parts)


def each_sends(network: Network, app: str | Application, n: int) -> dict[str, tuple[Action, ...]]:
    """Programs where every process sends ``n`` messages, to its outputs in turn, labelled
    ``P1.1``, ``P1.2``...; payload 1 when the application moves a quantity."""
    payload = 1 if make_app(app).conserved is not None else None
    programs: dict[str, tuple[Action, ...]] = {}
    for p in network.processes:
        outs = [c.dst for c in network.outputs(p)]
        programs[p] = tuple(Send(p, outs[k % len(outs)], payload, f"{p}.{k + 1}") for k in range(n))
    return programs


def system_of_scenario(
    scenario: Scenario, algorithm: AlgorithmFactory | None = None, depth: int | None = None
) -> System:
    """The system a scenario file describes (see the module docstring); ``algorithm``
    instead of the scenario's own, ``depth`` instead of the file's."""
    source = scenario.source
    chosen: AlgorithmFactory = algorithm or scenario.simulator().algorithm.fresh
    section = dict(scenario.search)
    common = {
        "network": scenario.network,
        "app": scenario.app,
        "initial": scenario.initial,
        "algorithm": chosen,
        "name": scenario.name,
    }
    if not section:
        programs = _programs_of(
            [s for s in scenario.steps if not isinstance(s, (Deliver, RunStep))], scenario.network
        )
        return System(**common, programs=programs, depth=depth)  # type: ignore[arg-type]
    reject_unknown_fields(
        section, _SEARCH_FIELDS, f"{source}: field 'search'", expected="expected some of"
    )
    if any(isinstance(s, RunStep) for s in scenario.steps):
        raise ScenarioError(
            f"{source}: a scenario with a 'search' section may not have 'run' steps: its "
            "steps are the prefix the search starts from, and the search makes the rest"
        )
    programs = _section_programs(section, scenario.network, scenario.app, source)
    plans = _plans(section, scenario.network, programs, source)
    if depth is None:
        depth = _whole(section, "depth", source, default=None)
    return System(
        **common,  # type: ignore[arg-type]
        prefix=tuple(s for s in scenario.steps if not isinstance(s, RunStep)),
        programs=programs,
        snapshots=plans,
        depth=depth,
    )


def _programs_of(actions: list[Any], network: Network) -> dict[str, tuple[Action, ...]]:
    programs: dict[str, list[Action]] = {p: [] for p in network.processes}
    for a in actions:
        owner = a.src if isinstance(a, Send) else a.process
        programs[owner].append(a)
    return {p: tuple(prog) for p, prog in programs.items() if prog}


def _whole(section: Mapping[str, Any], name: str, source: str, default: Any) -> Any:
    value = section.get(name, default)
    if value is default:
        return value
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ScenarioError(
            f"{source}: field 'search.{name}' must be a whole number (0 or more), got {value!r}"
        )
    return value


def _section_programs(
    section: Mapping[str, Any], network: Network, app: str, source: str
) -> dict[str, tuple[Action, ...]]:
    if "sends" in section and "programs" in section:
        raise ScenarioError(f"{source}: field 'search': give 'sends' or 'programs', not both")
    if "programs" in section:
        steps = section["programs"]
        if not isinstance(steps, list):
            raise ScenarioError(f"{source}: field 'search.programs' must be a list of steps")
        actions = []
        for k, step in enumerate(steps, start=1):
            action = parse_step(step, k, network, f"{source}: search.programs")
            if isinstance(action, (Deliver, RunStep)):
                raise ScenarioError(
                    f"{source}: search.programs step {k}: only send, internal and snapshot "
                    "steps: the search makes the deliveries"
                )
            actions.append(action)
        return _programs_of(actions, network)
    return each_sends(network, app, _whole(section, "sends", source, default=0))


def _plans(
    section: Mapping[str, Any],
    network: Network,
    programs: Mapping[str, tuple[Action, ...]],
    source: str,
) -> tuple[SnapshotPlan, ...]:
    if "snapshots" not in section:
        if any(isinstance(a, StartSnapshot) for prog in programs.values() for a in prog):
            return ()
        return (SnapshotPlan("s1", network.processes, "one"),)
    plans_data = section["snapshots"]
    if not isinstance(plans_data, list):
        raise ScenarioError(f"{source}: field 'search.snapshots' must be a list")
    plans = []
    for k, plan in enumerate(plans_data, start=1):
        where = f"{source}: search.snapshots entry {k}"
        if not isinstance(plan, dict):
            raise ScenarioError(f'{where}: expected an object like {{"id": "s1", "at": "any"}}')
        reject_unknown_fields(plan, _PLAN_FIELDS, where)
        at = plan.get("at", "any")
        if at == "any":
            at = list(network.processes)
        if not isinstance(at, list) or not at or any(p not in network.processes for p in at):
            raise ScenarioError(
                f"{where}: field 'at' must be \"any\" or a non-empty list of processes "
                f"(of {', '.join(network.processes)}), got {plan.get('at')!r}"
            )
        initiators = plan.get("initiators", "one")
        if initiators not in ("one", "all"):
            raise ScenarioError(
                f'{where}: field \'initiators\' must be "one" or "all", got {initiators!r}'
            )
        sid = plan.get("id", "s1")
        if not isinstance(sid, str) or not sid:
            raise ScenarioError(f"{where}: field 'id' must be a non-empty string")
        plans.append(SnapshotPlan(sid, tuple(dict.fromkeys(at)), initiators))
    ids = [p.snapshot_id for p in plans]
    if len(set(ids)) != len(ids):
        raise ScenarioError(f"{source}: field 'search.snapshots' lists an id twice")
    return tuple(plans)
