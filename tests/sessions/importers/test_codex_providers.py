"""Codex's ``model_provider``: a config id, mapped to the cache that serves it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importer_helpers import CODEX

from assembler.analysis.engine.importing import import_session


def _rollout(tmp_path: Path, provider: str) -> Path:
    rows = [json.loads(x) for x in CODEX.read_text("utf-8").splitlines() if x.strip()]
    for row in rows:
        if row.get("type") == "session_meta":
            row["payload"]["model_provider"] = provider
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


@pytest.mark.parametrize("name", ["azure", "Azure-OpenAI"])
def test_azure_serves_openai_models_with_openai_caching(tmp_path: Path, name: str) -> None:
    got = import_session("codex", _rollout(tmp_path, name))
    assert got.data["session"]["provider"] == "openai"
    assert got.warnings == (
        f"session_meta.model_provider {name!r} serves OpenAI's models: simulated with "
        "OpenAI's prompt caching (provider openai)",
    )


def test_openai_imports_without_a_warning(tmp_path: Path) -> None:
    got = import_session("codex", _rollout(tmp_path, "openai"))
    assert got.data["session"]["provider"] == "openai" and got.warnings == ()


def test_an_unknown_provider_is_kept_with_one_warning(tmp_path: Path) -> None:
    got = import_session("codex", _rollout(tmp_path, "oss"))
    assert got.data["session"]["provider"] == "oss"
    assert got.warnings == (
        "session_meta.model_provider 'oss' has no cache simulator: analyze with --provider "
        "and --model naming the cache that served it",
    )
