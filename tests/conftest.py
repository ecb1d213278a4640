from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assembler.analysis.engine.reuse import release_frozen
from assembler.sessions.loader import load_session
from assembler.sessions.model import Session

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_sessions"
BROWSER = ROOT / "tests" / "browser"


@pytest.fixture(scope="session")
def research_session() -> Session:
    return load_session(SAMPLES / "research_agent.yaml")


@pytest.fixture(autouse=True, scope="module")
def _nothing_stays_frozen() -> Iterator[None]:
    """The app freezes every object alive once it holds an analysis (freeze_for_reuse), as a
    server should; in a test process that is every object alive, whichever test made it. They
    go back to the collector after each module, so that no module runs on another's frozen
    heap. Not after each test: each freeze first collects whatever is not frozen, and a
    test process holds 300,000–750,000 objects. Thawed after every test, the app's tests
    made 46 s of the unit run's 58 s of full collections, 0.16 s each (measured with
    ``gc.callbacks``); frozen between a module's tests, a freeze walks only what the tests
    since the last one left."""
    yield
    release_frozen()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests are exactly those under tests/browser: `make unit` leaves that
    folder out (its modules import Playwright and start servers) and `make browser` runs
    only it, so a test on the wrong side of that line would run in neither."""
    for item in items:
        marked = item.get_closest_marker("browser") is not None
        if marked != (BROWSER in item.path.parents):
            where = "outside" if marked else "inside"
            raise pytest.UsageError(
                f"{item.nodeid}: {'marked' if marked else 'not marked'} browser {where} "
                "tests/browser; expected browser tests there and only there"
            )
