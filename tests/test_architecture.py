"""The package's shape: rooms of a readable size, imports that run one way."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "assembler"
MAX_LINES = 450
SUBPACKAGES = ("design", "sessions", "cache", "analysis", "cli")


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {
        str(p.relative_to(PACKAGE)): len(p.read_text("utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    assert sizes, "no modules found"
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_every_subpackage_says_its_job_and_what_it_may_import(name: str) -> None:
    doc = (PACKAGE / name / "__init__.py").read_text("utf-8")
    assert doc.startswith('"""') and "Import" in doc


def test_the_layer_contracts_hold() -> None:
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert linter is not None, "import-linter is a dev dependency"
    out = subprocess.run([linter], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert out.returncode == 0, out.stdout[-2000:]
    assert "0 broken" in out.stdout
