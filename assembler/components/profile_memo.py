"""Memoize builds that depend on the session profile alone.

The profile is shared by every step until a context change replaces it, so a
build that reads only the profile (the tools JSON, the scanned project files)
runs once per profile instance instead of once per step. Profiles hold dicts
(tool schemas) and are not hashable, so the memo is keyed by identity and
emptied when the profile is collected.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import wraps

from assembler.context import Context

ProfileBuild = Callable[[Context], "str | None"]


def per_profile(build: ProfileBuild) -> ProfileBuild:
    memo: dict[int, str | None] = {}

    @wraps(build)
    def cached(ctx: Context) -> str | None:
        key = id(ctx.profile)
        if key in memo:
            return memo[key]
        text = memo[key] = build(ctx)
        weakref.finalize(ctx.profile, memo.pop, key, None)
        return text

    return cached
