from __future__ import annotations

import subprocess
import sys

import assembler


def test_every_public_name_resolves() -> None:
    for name in assembler.__all__:
        assert getattr(assembler, name) is not None, name


def test_importing_the_package_does_not_load_the_engine() -> None:
    engine = (
        "assembler.analysis.engine.analyzer",
        "assembler.cache.tokenizers",
        "assembler.cache.prices.pricing",
    )
    code = f"import sys, assembler; print(any(m in sys.modules for m in {engine!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
