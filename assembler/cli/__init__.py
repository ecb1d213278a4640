"""The command line, ``python -m assembler``: one module per command group.

Imports anything below it; nothing imports it but ``__main__``.
"""

from assembler.cli.main import main

__all__ = ["main"]
