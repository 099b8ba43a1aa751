"""Entry point for `python -m wheypoint`."""

import sys

from wheypoint.cli import main

sys.exit(main())
