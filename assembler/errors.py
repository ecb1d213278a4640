"""Errors every command reports as one line and exit status 2."""

from __future__ import annotations


class UsageError(Exception):
    """Bad arguments or input; the message is shown as is."""
