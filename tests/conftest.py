from __future__ import annotations

from pathlib import Path

import pytest

from assembler.sessions.loader import load_session
from assembler.sessions.model import Session

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_sessions"


@pytest.fixture(scope="session")
def research_session() -> Session:
    return load_session(SAMPLES / "research_agent.yaml")
