"""``python -m snapshotlib.spark`` and ``spark-submit snapshotlib/spark/__main__.py``.

The ``snapshotlib`` command line (``sweep``, ``check-traces``, ...), runnable as a file:
``spark-submit`` takes a Python file, not a console script, and gives the session its
master and resources::

    PYSPARK_PYTHON=$PWD/.venv/bin/python .venv/bin/spark-submit --master spark://HOST:7077 \\
        snapshotlib/spark/__main__.py sweep examples/sweeps/small.toml --out results/small
"""

import sys

from snapshotlib.cli import main

if __name__ == "__main__":
    sys.exit(main())
