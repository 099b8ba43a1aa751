"""wheypoint: revisioned, validated handoff checkpoints for coding agents."""

__version__ = "0.1.0"
