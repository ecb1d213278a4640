"""recommend on recorded requests: a marker and lifetime plan, never dearer than the recorded
markers, checked by brute force over every rule combination and by simulating it again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from itertools import combinations, pairwise, product
from pathlib import Path

import pytest

from assembler.analysis.advice.breakpoint_search import brute_force, search
from assembler.analysis.advice.mixed_lifetimes import brute_force_mixed, search_mixed
from assembler.analysis.advice.recommendation import TIE
from assembler.analysis.advice.recorded_marks import (
    Marks,
    Resolver,
    Resolvers,
    Rule,
    candidate_rules,
    flattened,
    marked_calls,
    plan_marks,
    recorded_marks,
    resolve,
    with_marks,
)
from assembler.analysis.advice.recorded_plan import recommend_recorded
from assembler.analysis.advice.recorded_trace import recorded_traces
from assembler.analysis.bill import billed_usd
from assembler.analysis.engine import analyze, import_file
from assembler.cli import main
from assembler.sessions.loader import load_session
from assembler.sessions.model import RecordedBlock, Session
from tests.sessions.importers.importer_helpers import CODEX, FIXTURES, load

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "sample_sessions" / "imported_claude_code.yaml"
LIFETIME = FIXTURES / "traffic" / "claude_lifetime.jsonl"
PROXY = FIXTURES / "requests" / "proxy.jsonl"
REAL = ROOT.parent / "shared" / "real-traffic" / "claude-code" / "marot-spotter"


@cache
def _imported(kind: str, path: Path) -> Session:
    return load(import_file(kind, path))


def _usd(session: Session, marks: Marks | None = None) -> float:
    s = session if marks is None else with_marks(session, plan_marks(marks))
    return float(analyze(s).totals["usd"])


def _requests(session: Session) -> list[Sequence[RecordedBlock]]:
    return [c.request.blocks() for c in marked_calls(session) if c.request is not None]


def test_rules_land_on_the_same_kind_of_block_in_every_request() -> None:
    blocks = [
        RecordedBlock("tools", "read_file"),
        RecordedBlock("tools", "edit_file"),
        RecordedBlock("system", "system[0]"),
        RecordedBlock("system", "system[1]"),
        RecordedBlock("messages", "messages[0] text", role="user"),
        RecordedBlock("messages", "messages[1] text", role="user"),  # merged: one user turn
        RecordedBlock("messages", "messages[2] tool_use", role="assistant"),
        RecordedBlock("messages", "messages[3] tool_result", role="user"),
    ]
    where = Resolver(blocks)
    assert where(Rule("tools", -1)) == 1
    assert where(Rule("system", -1)) == 3 and where(Rule("system", 0)) == 2
    assert where(Rule("messages", 0)) == 5  # the end of the first (merged) message
    assert where(Rule("messages", -1)) == 7 and where(Rule("messages", -2)) == 6
    assert where(Rule("messages", -4)) is None  # three messages only
    assert Rule("messages", -1).name == "messages[-1].content[-1]"
    assert Rule("tools", -1).meaning == "the last tool"
    # two rules on one block mark it once, with the first (longer-lived) lifetime
    both = ((Rule("messages", 0), "1h"), (Rule("messages", -3), "5m"))
    assert resolve(both, blocks) == {5: "1h"}
    # a rule from the end that lands ahead of one from the start: no 1h after a 5m
    inverted = ((Rule("messages", 1), "5m"), (Rule("messages", -3), "1h"))
    assert resolve(inverted, blocks) == {5: "1h", 6: "5m"}
    inverted = ((Rule("messages", 1), "1h"), (Rule("messages", -3), "5m"))
    assert resolve(inverted, blocks) == {5: "5m", 6: "5m"}


def test_the_recorded_markers_put_back_bill_as_recorded() -> None:
    """Applying markers is faithful: the recorded ones, re-applied, bill the same."""
    for session in (load_session(SAMPLE), _imported("claude-code", LIFETIME)):
        again = with_marks(session, recorded_marks())
        assert analyze(again).totals["usd"] == pytest.approx(analyze(session).totals["usd"])


def test_a_block_re_marked_alike_stays_one_object_from_request_to_request() -> None:
    """The analysis tells an unchanged block by identity: the system prompt's marker, put
    on the same block in every request, must not make it a new block in each."""
    session = _imported("claude-code", LIFETIME)
    marks = ((Rule("system", -1), "1h"), (Rule("messages", -1), "5m"))
    requests = _requests(with_marks(session, plan_marks(marks)))
    assert len(requests) > 2
    ends = [next(b for b in reversed(r) if b.section == "system") for r in requests]
    assert all(b.breakpoint and b.ttl == "1h" for b in ends)
    assert all(a is b for a, b in pairwise(ends)), "re-marked anew in each request"


def test_a_plan_search_resolves_each_request_once() -> None:
    """Every plan of a search reads the same flattened requests: each is resolved once, and
    a whole request gives its blocks as one object however often it is read."""
    session = flattened(_imported("claude-code", LIFETIME))
    calls = [c for c in marked_calls(session) if c.request is not None]
    assert len(calls) > 2
    assert all(c.request.blocks() is c.request.blocks() for c in calls if c.request)
    resolvers = Resolvers()
    marks = ((Rule("system", -1), "1h"), (Rule("messages", -1), "5m"))
    first = [resolvers(b) for b in _requests(session)]
    assert all(resolvers(b) is r for b, r in zip(_requests(session), first, strict=True))
    again = with_marks(session, plan_marks(marks, resolvers))
    assert _requests(again) == _requests(with_marks(session, plan_marks(marks)))


@pytest.mark.parametrize("shared", [False, True])
def test_the_search_finds_the_brute_force_optimum_of_its_trace(shared: bool) -> None:
    for session in (_imported("claude-code", LIFETIME), _imported("requests", PROXY)):
        rules = candidate_rules(_requests(session))
        trace = recorded_traces([session], rules, None, None)[1 if shared else 0]
        for ttl in ("5m", "1h"):
            found, best = search(trace, ttl, 4), brute_force(trace, ttl, 4)
            assert found.usd == pytest.approx(best.usd, abs=1e-12)
        assert search_mixed(trace, 4).usd == pytest.approx(
            brute_force_mixed(trace, 4).usd, abs=1e-12
        )


def _every_plan(rules: Sequence[Rule], limit: int = 4) -> list[Marks]:
    """Every set of at most ``limit`` rules with every lifetime the API accepts (1h first)."""
    out: list[Marks] = []
    for k in range(limit + 1):
        for chosen in combinations(rules, k):
            for ttls in product(("1h", "5m"), repeat=k):
                if not any(a == "5m" and b == "1h" for a, b in pairwise(ttls)):
                    out.append(tuple(zip(chosen, ttls, strict=True)))
    return out


@pytest.mark.parametrize(("kind", "path"), [("claude-code", LIFETIME), ("requests", PROXY)])
def test_no_rule_combination_simulated_beats_the_recorded_markers_where_the_plan_does_not(
    kind: str, path: Path
) -> None:
    """Every combination of rules and lifetimes, each simulated: the plan bills what the
    simulator bills it, never more than the recorded markers, and at most the cheapest
    combination's bill plus what the search's trace cannot see (reported, not hidden)."""
    session = _imported(kind, path)
    plan = recommend_recorded([session])
    recorded = _usd(session)
    assert plan.recorded.usd == pytest.approx(recorded)
    assert plan.plan.usd <= recorded + TIE
    marks = plan.plan_marks
    assert (_usd(session, marks) if marks else recorded) == pytest.approx(plan.plan.usd)
    requests = _requests(session)
    placed: dict[tuple[object, ...], Marks] = {}  # plans that mark the same blocks bill alike
    for m in _every_plan(candidate_rules(requests)):
        placed.setdefault(tuple(tuple(sorted(resolve(m, b).items())) for b in requests), m)
    cheapest = min(_usd(session, m) for m in placed.values())
    assert cheapest <= plan.plan.usd + TIE  # the brute force is the floor
    if plan.changed:
        assert plan.plan.usd < recorded - TIE
    else:
        assert cheapest >= recorded - TIE  # nothing beats the recorded markers
    # the search reaches most of what the brute force finds
    assert (recorded - plan.plan.usd) >= 0.8 * (recorded - cheapest)


def test_the_lifetime_choice_is_said_from_the_sessions_own_gaps() -> None:
    plan = recommend_recorded([_imported("claude-code", LIFETIME)])
    assert plan.lifetime.startswith("Claude Code wrote 1h entries")
    assert "the same markers at 5m would bill" in plan.lifetime
    assert f"${_usd(_imported('claude-code', LIFETIME)):.4f} simulated" in plan.lifetime


def test_cli_prints_the_plan_and_its_saving_per_month(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = recommend_recorded([_imported("claude-code", LIFETIME)])
    path = tmp_path / "lifetime.yaml"
    assert main(["import", "claude-code", str(LIFETIME), "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["recommend", str(path), "--json", "--sessions-per-month", "500"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["changed"] is plan.changed is True
    assert (
        rec["after"]["usd"] == pytest.approx(plan.plan.usd)
        and rec["after"]["usd"] < rec["before"]["usd"]
    )
    assert rec["saving_per_month"] == pytest.approx(rec["saving_per_session"] * 500)
    assert [p["block"] for p in rec["plan"]] == [m.rule.name for m in plan.marks]
    assert all(p["cache_control"]["ttl"] in ("5m", "1h") for p in rec["plan"])
    assert main(["recommend", str(path)]) == 0
    text = capsys.readouterr().out
    assert "before  recorded markers" in text and "per month at 1,000 sessions" in text
    assert "cache_control {type: ephemeral, ttl: " in text
    assert main(["recommend", str(path), "-o", str(tmp_path / "x.yaml")]) == 2
    err = capsys.readouterr().err
    assert "marker plan, not a layout file" in err and err.count("\n") == 1


def test_a_codex_rollout_has_no_markers_to_place() -> None:
    """OpenAI's prefix cache has no markers: a rollout, or a session re-run there, as it is."""
    rollout = _imported("codex", CODEX)
    rerun = load_session(SAMPLE)
    for plan in (
        recommend_recorded([rollout]),
        recommend_recorded([rerun], provider="openai", model="gpt-4.1"),
    ):
        assert not plan.changed and plan.plan == plan.recorded and not plan.marks
        assert plan.sentences[0].startswith("No markers to place")
    assert recommend_recorded([rollout]).recorded.usd == pytest.approx(_usd(rollout))


@pytest.mark.skipif(not REAL.exists(), reason="../shared/real-traffic is absent")
def test_on_a_real_transcript_the_plan_is_simulated_again_and_never_dearer() -> None:
    session = _imported("claude-code", REAL / "subagent.jsonl")
    plan = recommend_recorded([session])
    assert plan.plan.usd <= plan.recorded.usd + TIE
    marks = plan.plan_marks
    if marks:
        assert _usd(session, marks) == pytest.approx(plan.plan.usd)


def test_a_folder_of_recorded_sessions_gets_one_plan_for_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        assert (
            main(["import", "claude-code", str(LIFETIME), "-o", str(tmp_path / f"{name}.yaml")])
            == 0
        )
    capsys.readouterr()
    assert main(["recommend", str(tmp_path), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    one = recommend_recorded([_imported("claude-code", LIFETIME)])
    assert rec["sessions"] == 2 and rec["requests"] == 2 * one.requests
    # each session has its own cache: twice the bills, the same plan, the same saving each
    assert rec["before"]["usd"] == pytest.approx(2 * one.recorded.usd)
    assert rec["saving_per_session"] == pytest.approx(one.saving_per_session)
    assert [p["block"] for p in rec["plan"]] == [m.rule.name for m in one.marks]


def test_the_bill_is_shown_only_at_the_sessions_own_model() -> None:
    session = _imported("claude-code", LIFETIME)
    own = recommend_recorded([session], billed_of=billed_usd)
    assert own.billed_usd == pytest.approx(billed_usd(analyze(session)))
    assert recommend_recorded([session]).billed_usd is None  # no bill asked for
    elsewhere = recommend_recorded(
        [session], provider="anthropic", model="claude-haiku-4-5", billed_of=billed_usd
    )
    assert elsewhere.billed_usd is None
    assert elsewhere.recorded.usd == pytest.approx(
        analyze(session, provider="anthropic", model="claude-haiku-4-5").totals["usd"]
    )
