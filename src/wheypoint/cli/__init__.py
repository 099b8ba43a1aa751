"""The command-line front door: parse arguments, call the application layer, print the reply.

A front door imports the application layer and the model only. It alone maps a refusal's kind to an exit
code and a parameter name to its flag spelling.
"""
