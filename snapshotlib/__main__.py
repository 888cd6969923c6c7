"""``python -m snapshotlib``: the same command line as ``snapshotlib``."""

import sys

from .cli import main

sys.exit(main())
