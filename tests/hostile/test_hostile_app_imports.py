"""Round three through the app's upload box: every hostile transcript, log, trace and zip
the command line refuses is refused in the sidebar too, with one escaped line naming the
upload and no exception; a text past the cap is accepted with its warning."""

from __future__ import annotations

from pathlib import Path

import pytest
from build import Case
from build_importers import CASES, build
from test_hostile_app import _check, _upload

UPLOADED = [c for c in CASES if c.argv[0] in ("import", "analyze") and c.names_file]
REFUSED = [c for c in UPLOADED if c.exit == 2 and "--layout" not in c.argv]
CUT = [c for c in UPLOADED if c.exit == 0 and "characters" in c.expect]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile-app-imports")
    build(tmp, tuple(REFUSED + CUT))
    return tmp


def _file(case: Case, hostile: Path) -> Path:
    index = 2 if case.argv[0] == "import" else 1
    return Path(case.argv[index].replace("{tmp}", str(hostile / case.name)))


@pytest.mark.slow
@pytest.mark.parametrize("case", REFUSED, ids=[c.name for c in REFUSED])
def test_refused_in_one_line(case: Case, hostile: Path) -> None:
    path = _file(case, hostile)
    messages, seconds, peak = _upload("upload_session", "w_sel_session", path)
    _check(messages, path.name, seconds, peak)


@pytest.mark.slow
@pytest.mark.parametrize("case", CUT, ids=[c.name for c in CUT])
def test_a_text_past_the_cap_is_accepted_with_its_warning(
    case: Case, hostile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_hostile_app import clear_caches

    from tests.app.app_helpers import new_app
    from ui.state import uploads

    # what is checked here is the cut and its warning, not the answer's budget: tokenizing
    # 5 MB of one letter takes seconds on a busy machine
    monkeypatch.setattr(uploads, "WORK_SECONDS", 120.0)
    clear_caches()
    at = new_app()
    at.run()
    at.selectbox(key="w_sel_session").select("Upload a file…").run()
    path = _file(case, hostile)
    at.file_uploader(key="upload_session").upload(path.name, path.read_bytes(), "text/plain")
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    warnings = [c.value for c in at.sidebar.caption if "warning" in c.value]
    assert any("characters" in w for w in warnings), warnings
