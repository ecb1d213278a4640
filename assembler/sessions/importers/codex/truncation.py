"""What Codex sent of a tool output that its rollout keeps whole.

Codex CLI versions that record no ``truncation_policy`` in their ``turn_context`` (0.58 and
before in the corpus) cut a tool output when they put it into the conversation, after
writing the rollout: an output over 10,240 bytes or 256 lines becomes ``Total output
lines: N`` followed by its first 128 lines (at most 5,120 bytes), a marker and as much of its
last 128 lines as fits in 10,240 bytes (codex-rs ``conversation_history.rs``,
``format_output_for_model_body``). On the recorded moonmind rollouts every output over
10,240 bytes grew the billed input by what that rule keeps (about 1,350 tokens instead of
2,700), within the framing of its request. Versions that record a policy write the
rollout after cutting, so their outputs are taken as recorded.
"""

from __future__ import annotations

MAX_BYTES = 10 * 1024
MAX_LINES = 256
HEAD_LINES = MAX_LINES // 2
TAIL_LINES = MAX_LINES - HEAD_LINES
HEAD_BYTES = MAX_BYTES // 2


def _head_bytes(data: bytes, limit: int) -> bytes:
    """The longest leading part of ``data`` within ``limit`` bytes that ends on a character."""
    cut = data[:limit]
    return cut.decode("utf-8", "ignore").encode("utf-8")


def _tail_bytes(data: bytes, limit: int) -> bytes:
    """The longest trailing part of ``data`` within ``limit`` bytes that starts on a character."""
    if limit <= 0:
        return b""
    cut = data[-limit:] if limit < len(data) else data
    return cut.decode("utf-8", "ignore").encode("utf-8")


def _line_count(text: str) -> int:
    """Lines as Codex counts them: split at newlines, no empty line after the last one."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def legacy_model_text(content: str) -> str:
    """``content`` as the 10 KiB / 256-line rule leaves it for the model."""
    data = content.encode("utf-8")
    total = _line_count(content)
    if len(data) <= MAX_BYTES and total <= MAX_LINES:
        return content
    segments = data.split(b"\n")
    lines = [s + b"\n" for s in segments[:-1]] + ([segments[-1]] if segments[-1] else [])
    head_take = min(HEAD_LINES, len(lines))
    tail_take = min(TAIL_LINES, len(lines) - head_take)
    omitted = len(lines) - head_take - tail_take
    head = b"".join(lines[:head_take])
    tail = b"".join(lines[len(lines) - tail_take :]) if tail_take else b""
    if omitted > 0:
        marker = f"\n[... omitted {omitted} of {total} lines ...]\n\n"
    elif len(data) > MAX_BYTES:
        marker = f"\n[... output truncated to fit {MAX_BYTES} bytes ...]\n\n"
    else:
        marker = ""
    out = _head_bytes(head, min(HEAD_BYTES, MAX_BYTES - len(marker))) + marker.encode("utf-8")
    out += _tail_bytes(tail, MAX_BYTES - len(out))
    return f"Total output lines: {total}\n\n" + out.decode("utf-8")
