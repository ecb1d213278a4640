"""Run the CLI on a hostile input in a child process and measure what it cost."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The time budget is counted in CPU seconds (the child's own and its workers'): what a
# run costs. Wall time on a shared runner also counts the other tests beside it (13.9 s
# of wall for 2.2 s of CPU was seen in CI); it only bounds a hang, at ``run_cli``'s timeout.
SECONDS = 10.0
PEAK_BYTES = 500 * 1024 * 1024
# A hard ceiling on the child's address space, so a regression fails the test instead
# of taking the machine down; the budget itself is checked on the measured peak.
ADDRESS_CEILING = 3 * 1024 * 1024 * 1024
# The child writes its own peak resident size on the way out: VmHWM, the high-water mark
# of its own address space. Not ru_maxrss: Linux keeps that across exec, so a child
# forked from a large test process would report the parent's size.
DRIVER = """
import atexit, os, resource, sys
def _peak():
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) * 1024
    except OSError:
        pass
    cpu = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        cpu += usage.ru_utime + usage.ru_stime
    with open(os.environ["HOSTILE_PEAK_FILE"], "w") as f:
        f.write(f"{peak} {cpu}")
atexit.register(_peak)
from assembler.cli import main
sys.exit(main(sys.argv[1:]))
"""


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_bytes: int
    cpu_seconds: float = -1.0  # user + system, workers included: what the run cost


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_CEILING, ADDRESS_CEILING))


def run_cli(
    args: list[str],
    peak_file: Path,
    timeout: float = SECONDS * 3,
    prefix: tuple[str, ...] = (),
) -> Run:
    """Exit code, output, wall time and peak memory (``-1`` if the child died first);
    ``prefix``: a command the child runs under (``setpriv …``)."""
    peak_file.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOSTILE_PEAK_FILE": str(peak_file)}
    start = time.monotonic()
    child = subprocess.Popen(
        [*prefix, sys.executable, "-c", DRIVER, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        preexec_fn=_limit,
        text=True,
        errors="replace",
    )
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
    seconds = time.monotonic() - start
    peak, cpu = peak_file.read_text().split() if peak_file.exists() else ("-1", "-1")
    return Run(child.returncode, out, err, seconds, int(peak), float(cpu))
