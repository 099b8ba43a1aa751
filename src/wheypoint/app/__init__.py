"""The application layer: one module per command family, the shell around the pure kernel.

It observes the world (the checkout, the clock, the environment), reads and writes through the store
interface, renders notes and reads transcripts. It imports the model, store, notes and transcripts,
never a front door, and speaks in parameters and refusal codes, never in command-line flags or exit codes.
"""
