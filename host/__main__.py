"""`python -m host [--data-dir DIR] [-v]`: run the host on this process's stdio (what `hearth host` does)."""

import sys

from host.app import main

sys.exit(main())
