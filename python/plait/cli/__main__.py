"""`python -m plait.cli`: the same as the `plait` command."""

import sys

from plait.cli import main

sys.exit(main())
