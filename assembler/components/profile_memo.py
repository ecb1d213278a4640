"""Memoize builds that depend on the session profile alone.

The profile is shared by every step until a context change replaces it, so a
build that reads only the profile (the tools JSON, the scanned project files)
runs once per profile instead of once per step.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from weakref import WeakKeyDictionary

from assembler.context import Context, Profile

ProfileBuild = Callable[[Context], "str | None"]


def per_profile(build: ProfileBuild) -> ProfileBuild:
    memo: WeakKeyDictionary[Profile, str | None] = WeakKeyDictionary()

    @wraps(build)
    def cached(ctx: Context) -> str | None:
        try:
            return memo[ctx.profile]
        except KeyError:
            text = memo[ctx.profile] = build(ctx)
            return text

    return cached
