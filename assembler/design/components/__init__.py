"""The built-in components. Each module registers through the public API, exactly
as an outside feature would: ``register_components(registry)``.

Imports: the rest of :mod:`assembler.design` only."""

from __future__ import annotations

import functools

from assembler.design.components import project, system, task
from assembler.design.registry import Registry

BUILTIN_MODULES = (system, project, task)


def register_builtins(registry: Registry) -> Registry:
    for module in BUILTIN_MODULES:
        module.register_components(registry)
    return registry


def default_registry() -> Registry:
    """A fresh registry holding every built-in component: a copy of the one registered
    once per process (the components are frozen and their builds keep no state; a copy
    has its own order and memo), not 23 registrations per analysis."""
    return _builtins().copy()


@functools.cache
def _builtins() -> Registry:
    return register_builtins(Registry())
