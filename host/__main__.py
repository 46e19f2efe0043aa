"""`python -m host ...` is the `hearth` command, for environments without the console script."""

import sys

from host.cli import main

sys.exit(main())
