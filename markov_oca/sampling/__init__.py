"""Sampling concrete games of any rule set, move by move, to check the exact chains.

``goose`` and ``ur`` play the rules themselves (numba, many games at once,
seeded), never the chain's tables; ``summary`` holds the streaming counts.
"""
