"""Entry point for `python -m wheypoint` and for this file run by its path: the same program as `wheypoint`.

The hooks run this file by its path without `site` (`python -S -P .../wheypoint/__main__.py`: see
app/harness_files.py's `default_runner`), so the folder holding the package may not be on the module path: it
is then added last, after the standard library, as `site` would have added it.
"""

import sys

if not __package__:  # run by its path, not as `python -m wheypoint`
    import os

    _folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if _folder not in sys.path:
        sys.path.append(_folder)

from wheypoint.cli.entry import run  # (after the module path is set above)

run()
