"""``python -m assembler proxy``'s bad input: one line, exit 2; a warning off loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from proxy_process import running_proxy

from assembler.cli.main import main
from scripts.app_server import ROOT


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--upstream", "ftp://gw.example"], "--upstream: expected an http:// or https:// URL"),
        (["--port", "0"], "--port: expected a port from 1 to 65535"),
        (["--timeout", "-1"], "--timeout: expected a positive number of seconds"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["proxy", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {says}") and err.count("\n") == 1


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with running_proxy(
        "http://127.0.0.1:9", tmp_path / "a.jsonl", "--no-predict", ready="proxy on"
    ) as p:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "assembler",
                "proxy",
                "--no-predict",
                "--port",
                str(p.port),
                "--log",
                str(tmp_path / "b.jsonl"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: --port {p.port}: cannot listen")
    assert "Traceback" not in done.stderr


def test_listening_off_loopback_warns(tmp_path: Path) -> None:
    with running_proxy(
        "http://127.0.0.1:9",
        tmp_path / "a.jsonl",
        "--no-predict",
        "--host",
        "0.0.0.0",
        ready="proxy on",
    ) as p:
        pass
    assert any(line.startswith("warning: listening on 0.0.0.0, not loopback") for line in p.err)
