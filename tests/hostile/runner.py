"""Run the CLI on a hostile input in a child process and measure what it cost.

A child is forked from a server that has imported the package once (one per test
process), not started afresh: a fresh interpreter spent about 0.4 s of CPU importing
before it read its input, on each of some 200 runs. The fork is still a process of its
own, with the address-space ceiling, its own files for output, and its CPU time and peak
counted from the fork. A run under a ``prefix`` command (``setpriv``) starts afresh.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

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
MEASURE = """
import resource
def write_measure(path, extra_cpu=0.0):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) * 1024
    except OSError:
        pass
    cpu = extra_cpu
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        cpu += usage.ru_utime + usage.ru_stime
    with open(path, "w") as f:
        f.write(f"{peak} {cpu}")
"""
DRIVER = (
    MEASURE
    + """
import atexit, os, sys
atexit.register(write_measure, os.environ["HOSTILE_PEAK_FILE"])
from assembler.cli import main
sys.exit(main(sys.argv[1:]))
"""
)


# The fork server: it imports what the commands import and loads both tokenizers' ranks
# (a fresh process spends 0.25 s of CPU on o200k's at its first count, 0.14 s more if it
# also needs cl100k's), then forks one child per job it reads on stdin, answering {"pid"}
# at once and {"code"} at the end. Each child's CPU is counted with what loading both cost
# the server, so a budget measured in a child is what a fresh process would spend, or up to
# 0.14 s more; its peak includes the server's pages.
SERVER = (
    MEASURE
    + """
import atexit, io, json, os, resource, sys, time, traceback
from assembler.cli import main as cli_main
for name in json.loads(sys.argv[1]):
    try:
        __import__(name)
    except Exception:
        pass
preloaded = time.process_time()
from assembler.cache.tokenizers import ENCODINGS, counter
for name in ENCODINGS:
    counter(name)
preloaded = time.process_time() - preloaded

def child(job):
    code = 1
    try:
        resource.setrlimit(resource.RLIMIT_AS, (job["ceiling"], job["ceiling"]))
        os.chdir(job["cwd"])
        os.environ.clear()
        os.environ.update(job["env"])
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        for fd, path in ((1, job["out"]), (2, job["err"])):
            opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        # the encodings and error handlers a fresh interpreter would pick: the server's own
        streams = [(s.encoding, s.errors) for s in (sys.stdin, sys.stdout, sys.stderr)]
        sys.stdin, sys.stdout, sys.stderr = (
            io.TextIOWrapper(
                io.FileIO(fd, "r" if fd == 0 else "w", closefd=False),
                encoding=encoding, errors=errors, line_buffering=fd == 2,
            )
            for fd, (encoding, errors) in enumerate(streams)
        )
        sys.argv = ["-c", *job["argv"]]
        try:
            code = cli_main(job["argv"])
        except SystemExit as exc:
            code = exc.code
        if code is None:
            code = 0
        elif not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
            write_measure(job["peak"], preloaded)
        finally:
            os._exit(code)

for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(job)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)
"""
)
#: What the server imports before it forks: the modules the commands import on their
#: way (measured over analyze, steps, render, lint, recommend, usage and import).
WARM = (
    "assembler.analysis",
    "assembler.analysis.advice",
    "assembler.analysis.bill",
    "assembler.analysis.engine",
    "assembler.analysis.reports",
    "assembler.cache",
    "assembler.cli.analysis_commands",
    "assembler.cli.compare_commands",
    "assembler.cli.import_commands",
    "assembler.cli.inspect_commands",
    "assembler.cli.lint_commands",
    "assembler.cli.recommend_commands",
    "assembler.cli.rules_commands",
    "assembler.cli.usage_commands",
    "assembler.sessions.importers.claude_code",
    "assembler.sessions.importers.codex",
    "assembler.sessions.importers.otel",
    "assembler.sessions.importers.request_logs.requests_log",
    "genai_prices",
    "tiktoken",
    "tiktoken_ext.openai_public",
    "yaml",
)


class _Server:
    """The fork server of this test process, started on first use."""

    process: subprocess.Popen[bytes] | None = None

    @classmethod
    def get(cls) -> subprocess.Popen[bytes]:
        if cls.process is None or cls.process.poll() is not None:
            cls.process = subprocess.Popen(
                [sys.executable, "-c", SERVER, json.dumps(WARM)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=_child_env(),
                cwd=ROOT,
                bufsize=0,  # raw pipes: ``select`` sees every answer not yet read
            )
            atexit.register(cls.process.kill)
        return cls.process


def _reply(out: IO[bytes], deadline: float | None) -> dict[str, Any] | None:
    """The server's next answer; None past ``deadline`` (monotonic). The pipe is unbuffered
    (a raw ``readline`` reads up to the newline only): with a buffered one, both answers of
    a quick child arrived in one read, ``select`` saw nothing left and the second answer
    waited out the whole timeout (CI: a 0.02 s run reported after 60 s)."""
    if deadline is not None:
        wait = max(0.0, deadline - time.monotonic())
        if not select.select([out], [], [], wait)[0]:
            return None
    line = out.readline()
    if not line:
        raise RuntimeError("the fork server of the hostile tests ended")
    answer: dict[str, Any] = json.loads(line)
    return answer


def _forked(args: list[str], peak_file: Path, timeout: float) -> Run:
    server = _Server.get()
    assert server.stdin is not None and server.stdout is not None
    out_file = peak_file.with_name(peak_file.name + ".stdout")
    err_file = peak_file.with_name(peak_file.name + ".stderr")
    job = {
        "argv": args,
        "env": _child_env(),
        "cwd": os.getcwd(),
        "out": str(out_file),
        "err": str(err_file),
        "peak": str(peak_file),
        "ceiling": ADDRESS_CEILING,
    }
    start = time.monotonic()
    message = memoryview(json.dumps(job).encode() + b"\n")
    while message:  # a raw write may take part of it
        message = message[server.stdin.write(message) or 0 :]
    started = _reply(server.stdout, None)
    assert started is not None
    ended = _reply(server.stdout, start + timeout)
    if ended is None:
        with contextlib.suppress(ProcessLookupError):  # it ended as the time ran out
            os.kill(started["pid"], signal.SIGKILL)
        ended = _reply(server.stdout, None)
        assert ended is not None
    seconds = time.monotonic() - start
    out = out_file.read_text("utf-8", errors="replace")
    err = err_file.read_text("utf-8", errors="replace")
    out_file.unlink()
    err_file.unlink()
    return _run(ended["code"], out, err, seconds, peak_file)


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_bytes: int
    cpu_seconds: float = -1.0  # user + system, workers included: what the run cost


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _run(code: int, out: str, err: str, seconds: float, peak_file: Path) -> Run:
    """The run, with the peak and CPU its child wrote (``-1``: it died before writing)."""
    peak, cpu = peak_file.read_text().split() if peak_file.exists() else ("-1", "-1")
    return Run(code, out, err, seconds, int(peak), float(cpu))


def cli_process(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """``python -m assembler ARGS`` from the current folder, as a process of its own forked
    from the fork server: what a fresh interpreter returns, without its 0.4 s of imports."""
    with tempfile.TemporaryDirectory() as tmp:
        run = run_cli(list(args), Path(tmp) / "peak", timeout=timeout)
    return subprocess.CompletedProcess(list(args), run.code, run.stdout, run.stderr)


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
    if not prefix:
        return _forked(args, peak_file, timeout)
    env = {**_child_env(), "HOSTILE_PEAK_FILE": str(peak_file)}
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
    return _run(child.returncode, out, err, seconds, peak_file)
