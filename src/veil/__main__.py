"""``python -m veil``: the same as the ``veil`` command."""

import sys

from veil.cli import run

sys.exit(run())
