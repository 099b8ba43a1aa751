"""The model layer: contracts, validation rules, ids, digests, refusals and the pure kernel.

Everything here is pure: no files, no clock, no processes, no database. It imports nothing of
wheypoint outside this package, so every other layer may build on it.
"""
