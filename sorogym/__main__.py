"""``python -m sorogym``: the command line of :mod:`sorogym.agents.cli`."""

import sys

from sorogym.agents.cli import main

sys.exit(main())
