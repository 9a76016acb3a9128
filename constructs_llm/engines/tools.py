"""Tool calling: whether an engine turns a model's output into OpenAI ``tool_calls``, and with
which parser.

vLLM (the vLLM DLC and LMI's vLLM backend) answers ``tool_choice: "auto"`` only with
``--enable-auto-tool-choice`` and a ``--tool-call-parser`` that fits the model's output format
(vllm-project/vllm ``docs/features/tool_calling.md`` @ 0064cc9c, "Automatic Function Calling");
SGLang parses tool calls only with ``--tool-call-parser`` (sgl-project/sglang
``python/sglang/srt/function_call/function_call_parser.py`` @ ce2b3128). The parser that fits
each model family is packaged data (``data/tool_parsers.json``, keyed by the ``family`` of
``data/models.json``). TGI's Messages API needs no parser: it constrains the output to the tools'
JSON schema with its grammar, whatever the model.

An engine's ``tool_calls`` setting: None (the default) turns tool calling on where the engine
and the model family are known to serve it, and off elsewhere; True asks for it (the synth
fails where it cannot be served); False turns it off. The streaming invoker follows the result:
with tool calling off, a request with tools gets a 400 naming the field instead of an answer
without tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from constructs_llm import catalogs

__all__ = [
    "ParserEngine",
    "ToolCalling",
    "known_parsers",
    "parser_name_problem",
    "parser_setting_problems",
    "parser_tool_calling",
    "tools_off",
    "tools_turned_off",
]

#: The engines whose parser names ``data/tool_parsers.json`` lists.
ParserEngine = Literal["vllm", "sglang"]


@dataclass(frozen=True)
class ToolCalling:
    """What one engine does with OpenAI tool calls for one model.

    :param served: whether ``tools`` reach the engine and come back as ``tool_calls``.
    :param parser: the engine's tool-call parser. @default None (none, or none needed: TGI)
    :param reason: why tool calling is off, naming the fix. @default "" (it is on)
    """

    served: bool
    parser: str | None = None
    reason: str = ""


def tools_off(reason: str) -> ToolCalling:
    return ToolCalling(served=False, reason=reason)


def known_parsers(engine: ParserEngine) -> tuple[str, ...]:
    """The parser names ``engine`` registers (``data/tool_parsers.json``)."""
    return catalogs.tool_parsers().engines[engine].parsers


def parser_name_problem(engine: ParserEngine, parser: str | None) -> str | None:
    """A problem when ``tool_call_parser`` is not a parser ``engine`` registers."""
    if parser is None:
        return None
    names = known_parsers(engine)
    return None if parser in names else _unknown_tool_parser(parser, names)


def _unknown_tool_parser(parser: str, known: tuple[str, ...]) -> str:
    return (
        f"tool_call_parser must be a parser the engine registers, got {parser!r}; known: "
        f"{', '.join(sorted(known))}"
    )


def parser_setting_problems(
    engine: ParserEngine, tool_calls: bool | None, parser: str | None
) -> list[str]:
    """``tool_call_parser`` must be a registered name, and not given with tool calling off."""
    problems = [parser_name_problem(engine, parser)]
    if parser is not None and tool_calls is False:
        problems.append(_parser_with_tools_off(parser))
    return [p for p in problems if p]


def _parser_with_tools_off(parser: str) -> str:
    return (
        f"tool_call_parser={parser!r} was given with tool_calls=False; drop one of them "
        "(tool_calls=None or True turns the parser on)"
    )


def parser_tool_calling(
    engine: ParserEngine,
    *,
    factory: str,
    tool_calls: bool | None,
    parser: str | None,
    family: str | None,
) -> ToolCalling:
    """Tool calling on an engine that needs a parser: the given one, else the family's."""
    if tool_calls is False:
        return tools_off(tools_turned_off(factory))
    chosen = parser or _family_parser(engine, family)
    if chosen is None:
        return tools_off(_no_tool_parser(family))
    return ToolCalling(served=True, parser=chosen)


def tools_turned_off(factory: str) -> str:
    return f"Engine.{factory}(tool_calls=False) turns tool calling off"


def _no_tool_parser(family: str | None) -> str:
    which = f"the model family {family!r}" if family else "this model (not in the packaged table)"
    return (
        f"no tool-call parser is known for {which}; pass tool_call_parser=... naming the parser "
        "that fits the model's chat template, or drop tool_calls=True"
    )


def _family_parser(engine: ParserEngine, family: str | None) -> str | None:
    parsers = catalogs.tool_parsers().families.get(family) if family else None
    if parsers is None:
        return None
    found: str | None = getattr(parsers, engine)
    return found
