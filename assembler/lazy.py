"""A package's public names, each imported from its module the first time it is used.

A package lists its names once, as imports under ``if TYPE_CHECKING:`` (what type
checkers and readers see), and sets ``__getattr__ = lazy_names(__name__, __file__)``:
importing the package then costs only the modules of the names asked for, so the
parser of a command or ``import assembler`` does not load the engine.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from importlib import import_module
from pathlib import Path


def lazy_names(package: str, init_file: str) -> Callable[[str], object]:
    """The module ``__getattr__`` for ``package``, from its ``TYPE_CHECKING`` imports."""
    where = type_checking_imports(Path(init_file).read_text("utf-8"))

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, original = where[name]
        value = getattr(import_module(module), original)
        setattr(sys.modules[package], name, value)  # asked once, found directly after
        return value

    return __getattr__


def type_checking_imports(source: str) -> dict[str, tuple[str, str]]:
    """Each name imported under a module-level ``if TYPE_CHECKING:``: (its module, its name there)."""
    where: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module is not None:
                for alias in stmt.names:
                    where[alias.asname or alias.name] = (stmt.module, alias.name)
    return where
