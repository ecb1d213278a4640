"""What ``analyze FILE --json`` on one session loads: not the modules of other
commands (the recommend search's numpy, the batch's process pool, the JUnit
writer's XML), nor the schema validators while the session is valid."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SAMPLE = str(Path(__file__).parents[2] / "sample_sessions" / "research_agent.yaml")
NOT_NEEDED = (
    "numpy",
    "jsonschema",
    "fastjsonschema",
    "multiprocessing",
    "xml.etree.ElementTree",
    "assembler.analysis.fleet.batch",
    "assembler.analysis.advice.recommendation",
    "assembler.analysis.advice.comparison",
    "assembler.analysis.advice.lint",
)


def _loaded(*argv: str) -> list[str]:
    code = (
        "import sys\n"
        "from assembler.cli.main import main\n"
        f"code = main({list(argv)!r})\n"
        f"print(code, sorted(m for m in {NOT_NEEDED!r} if m in sys.modules), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stderr.split()


def test_analyze_one_session_loads_only_what_it_needs() -> None:
    assert _loaded("analyze", SAMPLE, "--json") == ["0", "[]"]


def test_a_bad_session_still_gets_its_worded_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    text = Path(SAMPLE).read_text("utf-8")
    bad.write_text(text.replace("\n  provider: anthropic\n", "\n  provider: 7\n"), "utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "assembler", "analyze", str(bad), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        f"error: {bad}:12: session.provider: expected a string, found the integer 7\n"
    )
