"""The ShiViz export loads in ShiViz's upload box as is, markers drawn as arrows.

The checks run the file through :func:`shiviz_upload`, a Python re-implementation of
what ShiViz (github.com/DistributedClocks/shiviz) does with an uploaded file:

- ``js/shiviz.js`` (the file input's handler): the first line, wrapped in ``^...$``,
  is the log-parsing regular expression (an empty one means ShiViz's default), the
  second line the delimiter between executions (empty: none), the rest the log;
- ``js/util/regexp.js`` (``NamedRegExp``): plain groups become non-capturing,
  ``(?<name>`` groups become plain groups whose names are kept in order; flags ``gm``;
- ``js/model/parser.js``: the log is trimmed and the regex applied repeatedly (lines it
  does not match are skipped silently); each clock is parsed as JSON and must have an
  entry for its own host; zero entries are dropped (``js/model/vectorTimestamp.js``);
- ``js/model/modelGraph.js``: each host's own clock values are 1, 2, ... n; every
  entry names a known host and one of its events; an event's parents, which ShiViz
  draws as arrows, are the events whose entries it takes in, less those implied.

The golden file ``tests/golden/worked-example.shiviz.log`` is the worked example's
export. After a deliberate change regenerate it with
``UPDATE_GOLDEN=1 python3 -m pytest tests/test_shiviz.py`` and read the diff.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from snapshotlib import Simulator
from snapshotlib.cli import main
from snapshotlib.formats.scenario import load_scenario, run_scenario
from snapshotlib.formats.shiviz import to_shiviz

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE.parent / "examples" / "scenarios"
WORKED = SCENARIOS / "worked-example.json"
GOLDEN = HERE / "golden" / "worked-example.shiviz.log"

SHIVIZ_DEFAULT_PARSER = r"(?<event>.*)\n(?<host>\S*) (?<clock>{.*})"


class Rejected(Exception):
    """ShiViz would show an error instead of a graph."""


@dataclass
class Event:
    host: str
    clock: dict[str, int]
    text: str
    line: int  # as ShiViz counts: 1 + newlines before the match in the trimmed log
    parents: list[tuple[str, int]] = field(default_factory=list)

    @property
    def time(self) -> int:
        return self.clock[self.host]


@dataclass
class Upload:
    regex: str  # as ShiViz runs it, after its upload handler added ^ and $
    delimiter: str
    log: str  # the trimmed log the parser reads
    matched_lines: list[int]
    events: list[Event]


def named_regexp(source: str) -> tuple[re.Pattern[str], list[str]]:
    """ShiViz's ``NamedRegExp(source, "m")``: the regex with plain groups only, and the
    names of its groups in order."""
    reg = re.sub(r"\((?!\?(=|!|<|:))", "(?:", source)
    names: list[str] = []
    while m := re.search(r"\(\?<(\w+?)>.+\)", reg):
        if m.group(1) in names:
            raise Rejected(f"There are multiple capture groups named {m.group(1)}")
        names.append(m.group(1))
        reg = re.sub(r"\(\?<\w+?>", "(", reg, count=1)
    try:
        return re.compile(reg, re.MULTILINE), names
    except re.error as e:
        raise Rejected(f"The following regular expression entered was invalid: {e}") from None


def shiviz_upload(text: str) -> Upload:
    """What ShiViz makes of ``text`` uploaded as a file (see the module docstring)."""
    # the upload handler: text.split("\n", 2) keeps the first two pieces
    lines = text.split("\n", 2)[:2]
    if len(lines) < 2:
        raise Rejected("the file has no second line (lines[1].trim() throws)")
    parser = "^" + lines[0] + "$" if lines[0].strip() else SHIVIZ_DEFAULT_PARSER
    delimiter = "^" + lines[1].strip() + "$" if lines[1].strip() else ""
    start = text.find("\n", text.find("\n") + 1)
    log = text[start + 1 :]
    # Shiviz.visualize and LogParser
    if delimiter:
        named_regexp(delimiter)
    regex, names = named_regexp(parser.strip())
    if not {"clock", "host", "event"} <= set(names):
        raise Rejected("The parser RegExp you entered does not have the necessary groups")
    if delimiter:
        raise NotImplementedError("this re-implementation reads one execution (no delimiter)")
    raw = log.strip()
    events: list[Event] = []
    matched: list[int] = []
    for m in regex.finditer(raw):
        if m.end() == m.start():
            raise Rejected("an empty match: ShiViz's exec loop would never end")
        ln = raw.count("\n", 0, m.start()) + 1
        got = dict(zip(names, m.groups(), strict=True))
        try:
            clock = json.loads(got["clock"])
        except json.JSONDecodeError as e:
            raise Rejected(f"line {ln + 1}: cannot parse the vector timestamp: {e}") from None
        if not isinstance(clock, dict) or got["host"] not in clock:
            raise Rejected(f'Local host "{got["host"]}" is missing from timestamp on {ln}')
        clock = {h: t for h, t in clock.items() if t != 0}
        events.append(Event(got["host"], clock, got["event"], ln))
        matched.extend(range(ln, ln + m.group(0).count("\n") + 1))
    if not events:
        raise Rejected("The parser RegExp you entered does not capture any events")
    model_graph(events)
    return Upload(parser, delimiter, raw, matched, events)


def model_graph(events: list[Event]) -> None:
    """ShiViz's ``ModelGraph``: clock checks, then each event's parents (its arrows)."""
    by_host: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_host[e.host].append(e)
    for host, nodes in by_host.items():
        nodes.sort(key=lambda e: e.time)
        for i, e in enumerate(nodes):
            if e.time != i + 1:
                raise Rejected(f"clock values for host {host} must go 1, 2, ...: line {e.line}")
    for host, nodes in by_host.items():
        known: dict[str, int] = {}
        for e in nodes:
            known[host] = e.time
            candidates = []
            for other, t in e.clock.items():
                if other not in known or known[other] < t:
                    known[other] = t
                    if other not in by_host:
                        raise Rejected(f'line {e.line}: unrecognized host "{other}"')
                    if not 1 <= t <= len(by_host[other]):
                        raise Rejected(f"line {e.line}: invalid clock value {t} for {other}")
                    candidates.append(by_host[other][t - 1])
            connections = {(c.host, c.time): c for c in candidates}
            for c in candidates:
                for other, t in c.clock.items():
                    if other != c.host:
                        connections.pop((other, t), None)
            e.parents = sorted(connections)


def uploaded(sim: Simulator) -> Upload:
    return shiviz_upload(to_shiviz(sim))


def run(path: Path) -> Simulator:
    return run_scenario(load_scenario(path))


SEND = re.compile(r"send (?P<what>.+) to (?P<peer>\S+)")
RECEIVE = re.compile(r"receive (?P<what>.+?) from (?P<peer>\S+)( \(.*\))?")


def send_receive_pairs(events: list[Event]) -> list[tuple[Event, Event]]:
    """Each receive with its send: the k-th ``receive X from A`` at B goes with the k-th
    ``send X to B`` at A (channels carry each message or marker name once, or FIFO)."""
    sends: dict[tuple[str, str, str], list[Event]] = defaultdict(list)
    for e in events:
        if m := SEND.fullmatch(e.text):
            sends[(m["what"], e.host, m["peer"])].append(e)
    pairs = []
    taken: dict[tuple[str, str, str], int] = defaultdict(int)
    for e in events:
        if m := RECEIVE.fullmatch(e.text):
            key = (m["what"], m["peer"], e.host)
            assert taken[key] < len(sends[key]), f"line {e.line}: a receive without its send"
            pairs.append((sends[key][taken[key]], e))
            taken[key] += 1
    return pairs


def dominates(later: dict[str, int], earlier: dict[str, int]) -> bool:
    return later != earlier and all(later.get(h, 0) >= t for h, t in earlier.items())


# ------------------------------------------------------------------ the header lines
def test_first_line_is_a_regex_with_the_named_groups_shiviz_needs() -> None:
    first = to_shiviz(run(WORKED)).split("\n")[0]
    _, names = named_regexp("^" + first + "$")
    assert first.strip() == first != ""
    assert {"host", "clock", "event"} <= set(names)
    # and as a Python regex: JavaScript's (?<name>...) is Python's (?P<name>...)
    python = re.compile(first.replace("(?<", "(?P<"))
    assert {"host", "clock", "event"} <= set(python.groupindex)


def test_second_line_is_empty_so_shiviz_reads_one_execution() -> None:
    text = to_shiviz(run(WORKED))
    assert text.split("\n")[1] == ""
    assert shiviz_upload(text).delimiter == ""


def test_a_file_without_the_header_is_rejected_by_the_upload() -> None:
    # what the export used to write: the first event line taken for the regex
    old = 'internal A\nP1 {"P1": 1}\nsend B to P2\nP1 {"P1": 2}\n'
    with pytest.raises(Rejected, match="necessary groups"):
        shiviz_upload(old)


# ----------------------------------------------------------- every line, every clock
@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.json")), ids=lambda p: p.stem)
def test_every_log_line_of_every_example_is_one_event(path: Path) -> None:
    sim = run(path)
    up = uploaded(sim)
    lines = up.log.split("\n")
    assert up.matched_lines == list(range(1, len(lines) + 1))
    # an event per action, and one per message an action sends besides its own (markers,
    # replies sent by a receive)
    actions = sim.trace.actions
    own = sum(1 for m in sim.trace.messages if actions[m.sent_by].kind == "send")
    assert len(up.events) == len(actions) + len(sim.trace.messages) - own
    # JavaScript's "." and "$" stop at these too; Python's do not: none may occur
    assert not set(up.log) & {"\r", "\u2028", "\u2029"}


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.json")), ids=lambda p: p.stem)
def test_clocks_follow_happens_before(path: Path) -> None:
    up = uploaded(run(path))
    pairs = send_receive_pairs(up.events)
    assert pairs
    for send, receive in pairs:
        assert dominates(receive.clock, send.clock), (send, receive)
    last: dict[str, Event] = {}
    for event in up.events:  # and each event's clock dominates its host's event before
        if event.host in last:
            assert dominates(event.clock, last[event.host].clock), (last[event.host], event)
        last[event.host] = event


# ------------------------------------------------------------------ markers as arrows
def test_each_marker_send_and_receive_is_an_event_of_its_own() -> None:
    sim = run(WORKED)
    events = uploaded(sim).events
    markers = [m for m in sim.trace.messages if m.kind == "marker"]
    assert len(markers) == 6  # three processes, two outgoing channels each
    sends = [(e.host, e.text) for e in events if e.text.startswith("send marker")]
    receives = [(e.host, e.text) for e in events if e.text.startswith("receive marker")]
    channels = sim.network.channels
    assert sorted(sends) == sorted(
        (channels[m.channel].src, f"send marker s1 to {channels[m.channel].dst}") for m in markers
    )
    assert sorted(receives) == sorted(
        (channels[m.channel].dst, f"receive marker s1 from {channels[m.channel].src}")
        for m in markers
    )
    initiation = next(e for e in events if e.text.startswith("initiate snapshot s1"))
    p1_sends = [e for e in events if e.host == "P1" and e.text.startswith("send marker")]
    assert [e.time for e in p1_sends] == [initiation.time + 1, initiation.time + 2]


@pytest.mark.parametrize("name", ["worked-example", "02-two-snapshots", "token-ring"])
def test_shiviz_draws_an_arrow_from_each_marker_send_to_its_receive(name: str) -> None:
    events = uploaded(run(SCENARIOS / f"{name}.json")).events
    marker_pairs = [(s, r) for s, r in send_receive_pairs(events) if "marker" in s.text]
    assert marker_pairs
    for send, receive in marker_pairs:
        assert (send.host, send.time) in receive.parents, (send, receive)


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.json")), ids=lambda p: p.stem)
def test_a_marker_lacks_its_arrow_only_when_a_later_action_of_its_sender_overtook_it(
    path: Path,
) -> None:
    """Vector clocks cannot show a marker whose receiver already knew of something its
    sender did after sending that snapshot's markers; any other marker has its arrow,
    whatever the order of the markers one action sends."""
    events = uploaded(run(path)).events
    at = {(e.host, e.time): e for e in events}
    for send, receive in send_receive_pairs(events):
        if "marker" not in send.text or (send.host, send.time) in receive.parents:
            continue
        end = send.time  # the last marker send of the same action
        while (nxt := at.get((send.host, end + 1))) and nxt.text.startswith(
            send.text.rsplit(" to ", 1)[0] + " to "
        ):
            end += 1
        before = at.get((receive.host, receive.time - 1))
        assert before is not None and before.clock.get(send.host, 0) > end, (send, receive)


# ------------------------------------------------------------------------ the command
def test_cli_writes_the_worked_example_as_the_golden_file(tmp_path: Path) -> None:
    out = tmp_path / "worked.log"
    assert main(["shiviz", str(WORKED), "-o", str(out)]) == 0
    got = out.read_bytes().decode("utf-8")
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(got, encoding="utf-8", newline="\n")
        pytest.skip(f"rewrote {GOLDEN.relative_to(HERE.parent)}: review the diff")
    assert got == GOLDEN.read_bytes().decode("utf-8")
    assert len(shiviz_upload(got).events) == len(got.splitlines()) - 2


def test_cli_writes_the_same_file_to_standard_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["shiviz", str(WORKED)]) == 0
    assert capsys.readouterr().out == GOLDEN.read_text(encoding="utf-8")


def test_labels_with_line_breaks_stay_on_one_line(tmp_path: Path) -> None:
    scenario = tmp_path / "breaks.json"
    steps = [
        {"do": "internal", "at": "a", "label": "two\nlines"},
        {"do": "send", "from": "a", "to": "b", "label": "x\r\ny\u2028z"},
        {"do": "snapshot", "at": "b", "id": "s\n1"},
        {"do": "run", "scheduler": "fifo-order"},
    ]
    scenario.write_text(json.dumps({"processes": ["a", "b"], "steps": steps}))
    out = tmp_path / "breaks.log"
    assert main(["shiviz", str(scenario), "-o", str(out)]) == 0
    up = shiviz_upload(out.read_text(encoding="utf-8"))
    assert up.matched_lines == list(range(1, len(up.log.split("\n")) + 1))
    assert [e.text for e in up.events][:2] == ["internal two lines", "send x y z to b"]
    assert "send marker s 1 to a" in [e.text for e in up.events]


@pytest.mark.parametrize("name", ["P 1", "P\t1", "P\ufeff1"], ids=["space", "tab", "bom"])
def test_a_process_name_with_whitespace_is_bad_input_naming_file_and_name(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ShiViz reads a host up to the first whitespace (JavaScript's, which has U+FEFF)
    scenario = tmp_path / "spaced.json"
    steps = [{"do": "send", "from": name, "to": "P2"}, {"do": "run"}]
    scenario.write_text(json.dumps({"processes": [name, "P2"], "steps": steps}))
    out = tmp_path / "spaced.log"
    assert main(["shiviz", str(scenario), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(scenario) in err
    assert repr(name) in err and "without spaces" in err
    assert not out.exists()
