"""Tool calling: whether an engine turns a model's output into OpenAI ``tool_calls``, and with
which parser.

vLLM (the vLLM DLC and LMI's vLLM backend) answers ``tool_choice: "auto"`` only with
``--enable-auto-tool-choice`` and a ``--tool-call-parser`` that fits the model's output format
(vllm-project/vllm ``docs/features/tool_calling.md`` @ 0064cc9c, "Automatic Function Calling");
SGLang parses tool calls only with ``--tool-call-parser`` (sgl-project/sglang
``python/sglang/srt/function_call/function_call_parser.py`` @ ce2b3128). The parser that fits
each model family is packaged data (``data/tool_parsers.json``, keyed by the ``family`` of
``data/models.json``; the choice itself is ``engines/parsers.py``, which reasoning parsers share).
TGI's Messages API needs no parser: it constrains the output to the tools'
JSON schema with its grammar, whatever the model.

An engine's ``tool_calls`` setting: None (the default) turns tool calling on where the engine
and the model family are known to serve it, and off elsewhere; True asks for it (the synth
fails where it cannot be served); False turns it off. The streaming invoker follows the result:
with tool calling off, a request with tools gets a 400 naming the field instead of an answer
without tools.
"""

from __future__ import annotations

from dataclasses import dataclass

from constructs_llm.engines.parsers import TOOL_PARSERS, ParserEngine
from constructs_llm.problems import Problem


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


def parser_setting_problems(
    engine: ParserEngine, tool_calls: bool | None, parser: str | None
) -> list[Problem]:
    """``tool_call_parser`` must be a registered name, and not given with tool calling off."""
    return TOOL_PARSERS.setting_problems(engine, tool_calls, parser)


def parser_tool_calling(
    engine: ParserEngine,
    *,
    factory: str,
    tool_calls: bool | None,
    parser: str | None,
    family: str | None,
) -> ToolCalling:
    """Tool calling on an engine that needs a parser: the given one, else the family's."""
    choice = TOOL_PARSERS.choose(
        engine, factory=factory, switch=tool_calls, parser=parser, family=family
    )
    if choice.parser is None:
        return tools_off(choice.reason)
    return ToolCalling(served=True, parser=choice.parser)


def tools_turned_off(factory: str) -> str:
    return TOOL_PARSERS.turned_off(factory)
