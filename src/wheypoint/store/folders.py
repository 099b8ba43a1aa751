"""Folders that hold the user's words: made readable by this user only, every level that did not exist."""

from __future__ import annotations

import os


def make_private_folders(folder: str) -> None:
    """Make `folder` and every missing folder above it, each readable by this user only (os.makedirs gives the
    mode to the last one alone): the store and the hooks' state and log hold the user's words, so no folder made
    for them shows them to others. Folders that exist are left as they are."""
    missing = []
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for made in reversed(missing):
        try:
            os.mkdir(made, 0o700)
        except FileExistsError:  # made by a concurrent first opener meanwhile
            if not os.path.isdir(made):
                raise
