"""The official SDKs, loaded when a test first uses one.

Every test process collects every test module, and importing the two SDKs costs about
4 s of CPU (measured: their pydantic models are built at import). A module that names
them through here loads them only in the process that runs its tests."""

from __future__ import annotations

import importlib
from typing import Any


class Lazy:
    """A module's public names, the module imported on the first one asked for.

    Names with a leading underscore are not looked up: collection asks every name in a
    test module for some (``__wrapped__``, ``_mock_name``), and an SDK exports none."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(importlib.import_module(self._name), attr)
