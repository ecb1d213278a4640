"""The analysis subcommands (``analyze``, ``compare``) of ``python -m assembler``."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    """Add the analysis subcommands to the CLI's subparsers."""
    _ = (sub, argparse)
