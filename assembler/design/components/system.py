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
PROVIDER_GUIDANCE: dict[str, str] = {
    "anthropic": (
        "<parallel_tools>\n"
        "- When several tool calls do not depend on each other, issue them together.\n"
        "</parallel_tools>"
    ),
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

#: Per-channel output rules; a channel feature adds its rule with :func:`add_channel_format`.
CHANNEL_FORMATS: dict[str, str] = {
    "webui": "Full Markdown renders here: headings, tables, fenced code. No length limit.",
    "cli": "A terminal renders your reply. Use plain text and fenced code; avoid tables wider than 100 columns.",
    "telegram": "Write Markdown. Put code in fenced blocks. Keep each reply focused on one thing.",
    "discord": "Write Markdown. Put code in fenced blocks. A message over 2,000 characters is split, so keep replies short.",
    "slack": "Write Slack mrkdwn: *bold*, _italic_, `code` and fenced blocks. Slack shows no Markdown headings or tables.",
    "wechat": "Plain text only: Markdown shows up as raw symbols here. Keep paragraphs short.",
    "sms": "Plain text, at most 160 characters, no formatting of any kind.",
}


def add_model_guidance(provider: str, text: str) -> None:
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
        "When a task needs an action, make the tool call. Saying what you would do\n"
        "is not doing it; report results only after the call has returned.\n"
        "</tool_enforcement>"
    )


def _model_guidance(ctx: Context) -> str:
    extra = PROVIDER_GUIDANCE[ctx.profile.provider]
    return (
        f"<execution_guidance>\n"
        "<tool_use>\n"
        "- Reach for a tool whenever it makes the answer more correct or better grounded,\n"
        "  and keep going while one more call would clearly help.\n"
        "</tool_use>\n"
        "<verify>\n"
        "- Confirm preconditions before acting; check the result before calling a task done.\n"
        "</verify>\n"
        f"{extra}\n"
        "</execution_guidance>"
    )


def _platform_format(ctx: Context) -> str:
    channel = ctx.profile.channel
    return f"<platform_format>\nChannel: {channel}\n{CHANNEL_FORMATS[channel]}\n</platform_format>"


def _computer_use(ctx: Context) -> str:
    return (
        "<computer_use>\n"
        "You can see and operate a desktop through the computer tools.\n"
        "- Take a screenshot before each action and after it, and act on what the\n"
        "  screenshot shows, not on what you expect.\n"
        "- Prefer keyboard shortcuts to hunting for small targets with the pointer.\n"
        "- Stop and ask before anything that sends, buys, deletes or signs in.\n"
        "</computer_use>"
    )


def _skills_index(ctx: Context) -> str:
    lines = [
        f"- /{s.name.lstrip('/')}" + (f": {s.description}" if s.description else "")
        for s in ctx.profile.skills
    ]
    return "<skills>\nSkills you can invoke by name:\n" + "\n".join(lines) + "\n</skills>"


def _tools(ctx: Context) -> str:
    # Canonical JSON: key order and spacing fixed, so the tools prefix stays byte-stable.
    return json.dumps(
        [t.to_wire() for t in ctx.profile.tools], ensure_ascii=False, separators=(",", ":")
    )


def _environment(ctx: Context) -> str:
    env = ctx.profile.environment
    lines = [f"- OS: {env.os} · Shell: {env.shell}", f"- Runtime: {env.backend}"]
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
        template="<identity>You are {agent} (agent_id={id}). {description}</identity>",
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
        template="<tool_enforcement>act, don't describe</tool_enforcement>",
    )(_tool_enforcement)
    add(
        "model_guidance",
        Layer.L0,
        4,
        condition=lambda ctx: ctx.profile.provider in PROVIDER_GUIDANCE,
        condition_text="the provider has guidance registered",
        template="<execution_guidance><tool_use/><verify/>{provider extras}</execution_guidance>",
    )(_model_guidance)
    add(
        "platform_format",
        Layer.L0,
        5,
        condition=lambda ctx: ctx.profile.channel in CHANNEL_FORMATS,
        condition_text="the channel has a format rule",
        template="<platform_format>Channel: {channel}\\n{format rule}</platform_format>",
    )(_platform_format)
    add(
        "computer_use",
        Layer.L0,
        6,
        condition=lambda ctx: ctx.profile.computer_use,
        condition_text="computer-use tools are enabled",
        template="<computer_use>screenshot, act, verify</computer_use>",
    )(_computer_use)
    add(
        "skills_index",
        Layer.L0,
        7,
        condition=lambda ctx: bool(ctx.profile.skills),
        condition_text="enabled skills exist",
        template="<skills>- /{skill}: {description}</skills>",
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
