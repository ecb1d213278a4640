"""The package's shape: rooms of a readable size, imports that run one way."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from assembler.lazy import type_checking_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "assembler"
MAX_LINES = 450
MAX_MODULES = 15  # a package's own files, its __init__ included
MAX_PACKAGE_LINES = 3000
UI = ROOT / "ui"  # the app's helpers: held to the same sizes
PACKAGES = sorted(  # every folder of code (assembler.data holds only data files)
    str(p.parent.relative_to(ROOT)).replace("/", ".")
    for root in (PACKAGE, UI)
    for p in root.rglob("__init__.py")
    if len(list(p.parent.glob("*.py"))) > 1 or p.parent.parent == UI
)
PARTS = sorted(p.parent.name for p in (PACKAGE / "analysis").glob("*/__init__.py"))
# Outside the package and import-linter's view (pages are scripts, not a package).
CALLERS = sorted(
    str(p.relative_to(ROOT))
    for pattern in ("pages/*.py", "benchmarks/*.py", "scripts/*.py", "app.py")
    for p in ROOT.glob(pattern)
)


def _lines(path: Path) -> int:
    return len(path.read_text("utf-8").splitlines())


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {str(p.relative_to(ROOT)): _lines(p) for r in (PACKAGE, UI) for p in r.rglob("*.py")}
    assert sizes, "no modules found"
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_package_is_over_the_size_limit(package: str) -> None:
    files = sorted((ROOT / package.replace(".", "/")).glob("*.py"))
    assert len(files) <= MAX_MODULES, [f.name for f in files]
    assert sum(map(_lines, files)) <= MAX_PACKAGE_LINES


@pytest.mark.parametrize("package", [p for p in PACKAGES if p.count(".") >= 1])
def test_every_subpackage_says_its_job_and_what_it_may_import(package: str) -> None:
    doc = (ROOT / package.replace(".", "/") / "__init__.py").read_text("utf-8")
    assert doc.startswith('"""') and "Import" in doc


@pytest.mark.parametrize("part", PARTS)
def test_each_public_name_of_a_part_is_the_object_its_module_defines(part: str) -> None:
    package = f"assembler.analysis.{part}"
    init = PACKAGE / "analysis" / part / "__init__.py"
    names = type_checking_imports(init.read_text("utf-8"))
    assert names and sorted(names) == sorted(import_module(package).__all__)
    for name, (module, original) in names.items():
        assert module.startswith(package + "."), (name, module)
        # a submodule of the same name would shadow the name once imported
        assert not (init.parent / f"{name}.py").exists(), name
        assert getattr(import_module(package), name) is getattr(import_module(module), original)


@pytest.mark.parametrize("caller", CALLERS)
def test_pages_app_benchmarks_and_scripts_use_the_parts_public_names(caller: str) -> None:
    tree = ast.parse((ROOT / caller).read_text("utf-8"))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    internals = [m for m in imported if m.startswith("assembler.analysis.") and m.count(".") > 2]
    assert internals == []


def test_the_layer_contracts_hold() -> None:
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert linter is not None, "import-linter is a dev dependency"
    out = subprocess.run([linter], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert out.returncode == 0, out.stdout[-2000:]
    assert "0 broken" in out.stdout
