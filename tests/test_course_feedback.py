"""The feedback every try-it gives: a hint without the answer, the answer only on request."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest

from snapshotlib.course import Feedback, check_equal, is_blank, no_answer_yet

ANSWER = "F, G, H: P2 records on P3's marker"


def wrong() -> Feedback:
    return Feedback(False, "P2's recorded events: not quite.", "Which marker is first?", ANSWER)


def test_a_wrong_answer_shows_the_hint_and_keeps_the_answer_out_of_the_plain_text() -> None:
    fb = wrong()
    assert str(fb) == "✗ P2's recorded events: not quite. Hint: Which marker is first?"
    assert repr(fb) == str(fb)
    assert ANSWER not in str(fb) and ANSWER not in repr(fb)


def test_the_answer_is_folded_under_a_show_answer_control_in_the_notebook_view() -> None:
    page = wrong()._repr_html_()
    folded = re.search(r"<details[^>]*>(.*)</details>", page, re.S)
    assert folded is not None
    assert "<summary" in folded.group(1) and "Show answer</summary>" in folded.group(1)
    assert html.escape(ANSWER) in folded.group(1)
    assert html.escape(ANSWER) not in page.replace(folded.group(0), "")  # nowhere else
    assert "open" not in page.split("<details", 1)[1].split(">", 1)[0]  # closed at first


def test_a_right_answer_or_a_missing_one_shows_no_answer_part() -> None:
    right = Feedback(True, "Right.", "a hint", ANSWER)
    assert "<details" not in right._repr_html_() and "Hint" not in right._repr_html_()
    blank = no_answer_yet("P2's recorded events", "Write a list, e.g. ['F'].")
    assert not blank.ok and blank.answer == ""
    assert str(blank) == "✗ P2's recorded events: no answer yet. Hint: Write a list, e.g. ['F']."
    assert "<details" not in blank._repr_html_()


def test_the_notebook_view_escapes_what_it_shows() -> None:
    page = Feedback(False, "<b>x</b>", "a < b", "c & d")._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "a &lt; b" in page and "c &amp; d" in page


@pytest.mark.parametrize("placeholder", [None, ...])
def test_the_placeholder_of_a_try_it_is_no_answer_yet(placeholder: object) -> None:
    assert is_blank(placeholder)
    fb = check_equal("the count", placeholder, 7, hint="Count pairs.")
    assert not fb.ok and fb.message == "the count: no answer yet." and fb.hint == "Count pairs."
    assert not fb.answer


@pytest.mark.parametrize("falsy", [0, [], "", False, ()])
def test_a_falsy_answer_is_an_answer(falsy: object) -> None:
    assert not is_blank(falsy)


def test_check_equal_never_puts_the_expected_value_in_a_wrong_verdict() -> None:
    # a yes/no question: echoing "True is not it" would give "False" away
    fb = check_equal("did it occur", True, False, hint="Look at each moment.")
    assert not fb.ok
    assert str(fb) == "✗ did it occur: not quite. Hint: Look at each moment."
    assert "True" not in str(fb) and "False" not in str(fb)
    assert fb.answer == "False" and "False" in fb._repr_html_()


def test_check_equal_reveals_its_explanation_on_request_and_on_success() -> None:
    reveal = "No: the run never passed through it."
    fb = check_equal("did it occur", True, False, "Look at each moment.", reveal=reveal)
    assert fb.answer == reveal and reveal not in str(fb)
    right = check_equal("did it occur", False, False, "Look at each moment.", reveal=reveal)
    assert right.ok and str(right) == f"✓ did it occur: right. {reveal}"
    plain = check_equal("processes", ["P1"], ["P1"])
    assert str(plain) == "✓ processes: right, ['P1']."


def _jupyterlab_bundles() -> list[Path]:
    static = Path(sys.prefix) / "share" / "jupyter" / "lab" / "static"
    return sorted(static.glob("*.js")) if static.is_dir() else []


def test_jupyterlabs_sanitizer_keeps_the_show_answer_control() -> None:
    """Untrusted outputs are sanitized; ``details`` and ``summary`` must survive it."""
    lists = []
    for bundle in _jupyterlab_bundles():
        text = bundle.read_text(encoding="utf-8", errors="replace")
        lists += re.findall(r"allowedTags:\[([^\]]*)\]", text)
    if not lists:
        pytest.skip("JupyterLab's front end is not installed here")
    tags = max(lists, key=len)  # the sanitizer's main list (others are for tiny snippets)
    assert '"details"' in tags and '"summary"' in tags and '"div"' in tags
