"""``python -m service.cli``: the ``meeple`` command (a plain ``meeple worker`` starts its
workers so)."""

import sys

from service.cli import main

sys.exit(main())
