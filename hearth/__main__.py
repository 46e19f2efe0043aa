"""`python -m hearth ...` is the `hearth` command, for environments without the console script."""

import sys

from hearth.cli import main

sys.exit(main())
