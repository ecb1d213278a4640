"""Built-in L0 components: the system level, unchanged for the whole session."""

from __future__ import annotations

import functools
import json

from assembler.design.components.memory import memory_block, memory_enabled
from assembler.design.context import Context
from assembler.design.layers import Layer, Placement
from assembler.design.registry import Registry

#: Per-provider extras under the shared execution-guidance skeleton. A provider
#: feature adds its entry with :func:`add_model_guidance`.
#: ``None`` registers a provider whose guidance is empty: Anthropic models
#: support tool use natively, so the design (§6) gives them nothing here.
PROVIDER_GUIDANCE: dict[str, str | None] = {
    "anthropic": None,
    "openai": (
        "<call_format>\n"
        "- Make every tool call through the function-calling interface; a call written\n"
        "  out as prose or as JSON in your reply is not executed.\n"
        "</call_format>"
    ),
    "google": (
        "<call_format>\n"
        "- Give absolute paths in every file tool call.\n"
        "- Send one function call per part; do not nest calls inside text.\n"
        "</call_format>"
    ),
    "deepseek": (
        "<call_format>\n"
        "- Keep reasoning out of tool arguments; arguments carry values only.\n"
        "</call_format>"
    ),
}

#: The ``{limit}`` of the design's sms rule: one SMS segment.
SMS_LIMIT = 160

#: Per-channel output rules (``{format_rule}``); a channel feature adds its rule with
#: :func:`add_channel_format`. telegram, discord, wechat and sms are the design's
#: words (§4' item 6), webui is the §6 example's; cli and slack are ours.
CHANNEL_FORMATS: dict[str, str] = {
    "webui": "Full Markdown supported, code blocks collapsible, max message length unlimited.",
    "cli": "Plain text. Wrap code in fences. Keep lines under 100 columns.",
    "telegram": "Use Markdown. Wrap code in fences. Keep replies focused.",
    "discord": "Use Markdown. Wrap code in fences. Keep replies focused.",
    "slack": "Use Slack mrkdwn: *bold*, _italic_, `code`. Wrap code in fences. No headings or tables.",
    "wechat": "Plain text only — no Markdown. Short paragraphs.",
    "sms": f"Plain text, ≤ {SMS_LIMIT} chars, no formatting.",
}


def add_model_guidance(provider: str, text: str | None) -> None:
    PROVIDER_GUIDANCE[provider] = text


def add_channel_format(channel: str, rule: str) -> None:
    CHANNEL_FORMATS[channel] = rule


def _identity(ctx: Context) -> str:
    agent = ctx.profile.agent
    lines = [f"You are {agent.name} (agent_id={agent.id})."]
    if agent.description:
        lines.append(agent.description)
    return "<identity>\n" + "\n".join(lines) + "\n</identity>"


def _inline_prompt(ctx: Context) -> str | None:
    prompt = ctx.profile.agent.inline_prompt
    return f"<inline_prompt>\n{prompt.strip()}\n</inline_prompt>" if prompt else None


def _tool_enforcement(ctx: Context) -> str:
    return (
        "<tool_enforcement>\n"
        "When you need to perform an action, use tool calls. Do not just\n"
        "describe what you would do — actually do it.\n"
        "</tool_enforcement>"
    )


#: Names a session may give a provider whose guidance is another's: the platform serving
#: it (Bedrock, Vertex) or the cache engine's name for it (gemini).
GUIDANCE_FAMILY = {
    "gemini": "google",
    "google-gla": "google",
    "google-vertex": "google",
    "anthropic-bedrock": "anthropic",
    "anthropic-vertex": "anthropic",
}


def guidance_provider(provider: str) -> str:
    """The provider whose guidance a session naming ``provider`` gets."""
    p = provider.lower()
    return GUIDANCE_FAMILY.get(p, p)


def _model_guidance(ctx: Context) -> str | None:
    provider = guidance_provider(ctx.profile.provider)
    extra = PROVIDER_GUIDANCE[provider]
    if extra is None:  # registered empty: native support (design §6)
        return None
    return (
        f"[Execution guidance ({provider})]\n"
        "<tool_use>\n"
        "- Use tools when they improve correctness or grounding; don't stop early when\n"
        "  another call would materially help.\n"
        "</tool_use>\n"
        "<verify>\n"
        "- Check prerequisites before acting; verify results before declaring done.\n"
        "</verify>" + (f"\n{extra}" if extra else "")
    )


def _platform_format(ctx: Context) -> str:
    channel = ctx.profile.channel
    return f"[Output channel: {channel}]\n{CHANNEL_FORMATS[channel]}"


def _skills_index(ctx: Context) -> str:
    names = ", ".join(f"/{s.name.lstrip('/')}" for s in ctx.profile.skills)
    return f"<skills>\nAvailable skills: {names}\n</skills>"


def _tools(ctx: Context) -> str:
    # Canonical JSON: key order and spacing fixed, so the tools prefix stays byte-stable.
    return json.dumps(
        [t.to_wire() for t in ctx.profile.tools], ensure_ascii=False, separators=(",", ":")
    )


def _environment(ctx: Context) -> str:
    env = ctx.profile.environment
    lines = [f"- OS: {env.os}  ·  Shell: {env.shell}", f"- Runtime: {env.backend}"]
    if env.harness:
        where = f", which keeps its own state in {env.state_dir}" if env.state_dir else ""
        lines.append(
            f"- Harness: {env.harness}{where}. That state belongs to the harness running you,"
            " not to the project you are working on, and no other tool on this machine owns it."
        )
    return "<environment>\n" + "\n".join(lines) + "\n</environment>"


def register_components(registry: Registry) -> None:
    # Every L0 block reads the profile alone: built once per profile, not per step.
    add = functools.partial(registry.component, profile_only=True)
    add(
        "identity",
        Layer.L0,
        1,
        template="<identity>\nYou are {agent} (agent_id={id}).\n{description}\n</identity>",
    )(_identity)
    add(
        "inline_prompt",
        Layer.L0,
        2,
        condition=lambda ctx: bool(ctx.profile.agent.inline_prompt),
        condition_text="the agent has an inline prompt",
        template="<inline_prompt>{prompt}</inline_prompt>",
    )(_inline_prompt)
    add(
        "tool_enforcement",
        Layer.L0,
        3,
        template="<tool_enforcement>When you need to perform an action, use tool calls. …</tool_enforcement>",
    )(_tool_enforcement)
    add(
        "model_guidance",
        Layer.L0,
        4,
        condition=lambda ctx: guidance_provider(ctx.profile.provider) in PROVIDER_GUIDANCE,
        condition_text="the provider has guidance registered (Anthropic: empty, native support)",
        template="[Execution guidance ({provider})]\n<tool_use>…</tool_use>\n<verify>…</verify>\n{provider_extra}",
    )(_model_guidance)
    add(
        "platform_format",
        Layer.L0,
        5,
        condition=lambda ctx: ctx.profile.channel in CHANNEL_FORMATS,
        condition_text="the channel has a format rule",
        template="[Output channel: {channel}]\n{format_rule}",
    )(_platform_format)
    add(
        "skills_index",
        Layer.L0,
        7,
        condition=lambda ctx: bool(ctx.profile.skills),
        condition_text="enabled skills exist",
        template="<skills>\nAvailable skills: /{skill}, …\n</skills>",
    )(_skills_index)
    add(
        "tools",
        Layer.L0,
        8,
        placement=Placement.TOOLS,
        condition=lambda ctx: bool(ctx.profile.tools),
        condition_text="the agent has tools",
        template="[tool and MCP schemas as JSON: the request's tools section]",
    )(_tools)
    add(
        "memory_global",
        Layer.L0,
        9,
        condition=memory_enabled,
        condition_text="memory backend is not 'none'",
        template="<memory>who wrote it · workspace · budgeted summary · tools for the rest</memory>",
    )(memory_block)
    add(
        "environment",
        Layer.L0,
        10,
        template="<environment>OS · shell · runtime · harness and its state directory</environment>",
    )(_environment)
