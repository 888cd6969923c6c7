"""What the exercises share with the grader: each exercise's setup (the runs of a
learner's variant) and its rules (which engine implementations an answer may not use).

One module per exercise, ``exNN`` for ``exercises/NN_name.ipynb``, with:

* ``NAME``: the exercise's name, e.g. ``"01_is_this_cut_consistent"``;
* ``VARIANT``: whether each learner gets runs of their own (``variant`` in the tests);
* ``REFUSE``: answer name -> the engine implementations (``"module:qualname"``) that
  answer may not call or subclass: the exercise asks the learner to write them;
* setup functions the notebook and the tests call with the learner's ``variant``.

Nothing here is an answer: the expected results are computed by the hidden tests, which
only the grader has.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def rules_for(exercise: str) -> ModuleType | None:
    """The module of ``exercise`` (``"01_..."`` or ``"01"``), or None if it has none."""
    number = exercise.split("_", 1)[0]
    if not number.isdigit():
        return None
    try:
        return importlib.import_module(f"{__name__}.ex{int(number):02d}")
    except ModuleNotFoundError:
        return None
