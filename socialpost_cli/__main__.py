"""`python -m socialpost_cli`: the same as the `socialpost` console script."""

import sys

from socialpost_cli.main import main

sys.exit(main())
