"""What a chat request is checked against: the body its engine takes, whether that engine
serves tool calls, and the model's token limit. Stdlib only: this file ships in the Lambda.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...formats import EngineName, RequestFormat
from ..routing import Route

_GENERATE_NO_TOOLS = (
    "its engine takes the generate API (REQUEST_FORMAT=generate), which has no tool calling; "
    "deploy the model with a messages (chat) API"
)
_TOOLS_OFF = (
    'tool calling is off for this model (TOOLS=off, or "tools": false in its ROUTES entry): '
    "its engine does not parse tool calls; deploy it with tool calling on (the engine's "
    "tool_calls=True, with a tool_call_parser where it needs one)"
)


@dataclass(frozen=True, kw_only=True)
class ChatTarget:
    """The engine a chat request goes to, as far as checking the request goes.

    :param request_format: the body the engine takes.
    :param tools: whether it serves tool calls. @default None: on for the messages format,
        off for generate (which has none)
    :param max_total_tokens: the model's prompt + completion limit, which bounds
        ``max_tokens``. @default None (not known: the engine checks)
    :param engine: the engine, which decides the fields that pass. @default None (not known:
        the fields every engine honours)
    :param vision: whether the model takes images; False refuses image parts. @default None
        (not known: they are sent as they come)
    """

    request_format: RequestFormat
    tools: bool | None = None
    max_total_tokens: int | None = None
    engine: EngineName | None = None
    vision: bool | None = None

    @classmethod
    def of_route(cls, route: Route, *, tools: bool | None) -> ChatTarget:
        """The target a route names; ``tools`` as the settings decide it for the route."""
        return cls(
            request_format=route.request_format,
            tools=tools,
            max_total_tokens=route.max_total_tokens,
            engine=route.engine,
            vision=route.vision,
        )

    @property
    def generate(self) -> bool:
        """Whether the engine takes the generate API (one templated prompt, no chat template)."""
        return self.request_format is RequestFormat.GENERATE

    @property
    def serves_tools(self) -> bool:
        return (not self.generate) if self.tools is None else self.tools

    @property
    def why_no_tools(self) -> str:
        return _GENERATE_NO_TOOLS if self.generate else _TOOLS_OFF
