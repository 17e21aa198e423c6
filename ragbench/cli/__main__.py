"""`python -m ragbench.cli`: the same as the `ragbench` console script."""

import sys

from ragbench.cli.main import main

sys.exit(main())
