"""Entry point for `python -m wheypoint`."""

import sys

from wheypoint.cli.main import main

sys.exit(main())
