"""The notes layer: rendering a record as Markdown, parsing any note, linting, note files, seed 3's snapshot.

Imports only the model: a note is text in and text out, plus the atomic write of one file.
"""
