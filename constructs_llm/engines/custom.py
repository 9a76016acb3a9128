"""A serving image you bring, with the contract you state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field

from constructs_llm.contract import RequestFormat, StreamFormat
from constructs_llm.engines._support import enum_value, planner_dtype
from constructs_llm.engines.chat_completions_path import ChatCompletionsPath
from constructs_llm.engines.context import HF_TOKEN_ENV_NAMES, Accelerator, EngineContext, EnvRule
from constructs_llm.engines.engine import Engine
from constructs_llm.engines.env_rules import env_not_a_string
from constructs_llm.engines.settings import SettingsChecked, setting
from constructs_llm.engines.tools import ToolCalling, tools_off
from constructs_llm.hardware.instance_type import InstanceType
from constructs_llm.images.container_image import ContainerImage
from constructs_llm.problems import Problem
from constructs_llm.sizing.memory import DTYPE_BYTES
from constructs_llm.values import env_problem


@dataclass(frozen=True, kw_only=True)
class CustomEngine(SettingsChecked, Engine):
    """Bring your own serving image; you state its contract.

    :param image: the container image.
    :param stream_format: how it frames streamed tokens (``StreamFormat`` or its value).
    :param request_format: the request body it expects. @default MESSAGES
    :param accelerator: "nvidia" or "neuron" to check the instance type. @default any
    :param env: fixed environment of the image. @default none
    :param model_env_name: env name that receives the Hub id or ``/opt/ml/model``; None
        to pass nothing. @default "HF_MODEL_ID"
    :param token_env_names: env names that receive a Hub token. @default HF_TOKEN and
        HUGGING_FACE_HUB_TOKEN
    :param weight_dtype: dtype or quantization for memory sizing. @default the model's
    :param tool_calls: True when the image serves OpenAI tool calls on its messages API (tool
        parsing on), so the invoker forwards ``tools``; the generate request format has none.
        @default None: off (the library cannot know what the image does), so a request with
        tools gets a 400 naming the field
    """

    name = "custom"
    factory_name = "custom"
    chat_completions_path = ChatCompletionsPath.UNKNOWN  # the image is the user's

    image: ContainerImage = setting(MISSING, image=True)
    # Given as members or their values; __post_init__ stores the members.
    stream_format: StreamFormat | str  # type: ignore[assignment]
    request_format: RequestFormat | str = RequestFormat.MESSAGES  # type: ignore[assignment]
    accelerator: Accelerator | None = setting(choices=("nvidia", "neuron"))
    env: Mapping[str, str] = field(default_factory=dict)
    model_env_name: str | None = "HF_MODEL_ID"
    token_env_names: tuple[str, ...] = HF_TOKEN_ENV_NAMES
    weight_dtype: str | None = None
    tool_calls: bool | None = setting(boolean=True)

    def _more_problems(self) -> list[Problem]:
        problems: list[Problem] = []
        if self.image is None:
            problems.append(
                Problem.of(
                    "image",
                    None,
                    "image is required;",
                    "pass ContainerImage.from_uri(...) or .dlc(...)",
                )
            )
        # Formats may be given by value ("openai"); store the enum members.
        stream = enum_value(StreamFormat, self.stream_format, "stream_format", problems)
        request = enum_value(RequestFormat, self.request_format, "request_format", problems)
        object.__setattr__(self, "stream_format", stream or StreamFormat.AUTO)
        object.__setattr__(self, "request_format", request or RequestFormat.MESSAGES)
        env_wrong = env_problem("env", self.env)
        if env_wrong:
            problems.append(env_wrong)
        else:
            object.__setattr__(self, "env", dict(self.env or {}))
            problems += [
                env_not_a_string(k, v)
                for k, v in self.env.items()
                if not isinstance(k, str) or not isinstance(v, str)
            ]
        if self.model_env_name is not None and not isinstance(self.model_env_name, str):
            problems.append(
                Problem.of(
                    "model_env_name",
                    self.model_env_name,
                    f"model_env_name must be an env name such as 'HF_MODEL_ID' or None, got "
                    f"{self.model_env_name!r}",
                )
            )
        weight = self.weight_dtype
        if weight is not None and (not isinstance(weight, str) or planner_dtype(weight) is None):
            problems.append(
                Problem.of(
                    "weight_dtype",
                    self.weight_dtype,
                    f"weight_dtype must be one of {sorted(DTYPE_BYTES)}, got {self.weight_dtype!r}",
                )
            )
        if isinstance(self.token_env_names, str):
            problems.append(
                Problem.of(
                    "token_env_names",
                    self.token_env_names,
                    "token_env_names must be a tuple of names, got the string "
                    f"{self.token_env_names!r}",
                )
            )
        else:
            object.__setattr__(self, "token_env_names", tuple(self.token_env_names))
        if self.tool_calls is True and request is RequestFormat.GENERATE:
            problems.append(
                Problem.of(
                    "tool_calls",
                    True,
                    "tool_calls=True needs request_format=RequestFormat.MESSAGES: the generate "
                    "request format has no tool calling",
                )
            )
        if self.tool_calls is True and request is RequestFormat.EMBED:
            problems.append(
                Problem.of(
                    "tool_calls",
                    True,
                    "tool_calls=True needs request_format=RequestFormat.MESSAGES: an embedding "
                    "model (RequestFormat.EMBED) has no tool calling",
                )
            )
        return problems

    def tool_calling(
        self, *, family: str | None = None, user_env: Mapping[str, str] | None = None
    ) -> ToolCalling:
        if self.tool_calls and self.request_format is RequestFormat.MESSAGES:
            return ToolCalling(served=True)
        return tools_off(
            "Engine.custom() serves tool calls only when declared: pass tool_calls=True if the "
            "image parses them on its messages API"
        )

    def image_for(self, instance: InstanceType) -> ContainerImage:
        return self.image

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        env = dict(self.env)
        if self.model_env_name:
            env[self.model_env_name] = ctx.model_location
        return env

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {self.model_env_name: EnvRule.MODEL} if self.model_env_name else {}

    def _hardware_problems(self, ctx: EngineContext) -> list[Problem]:
        return super()._hardware_problems(ctx) if self.accelerator else []

    def _warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        if ctx.max_input_tokens is None and ctx.max_total_tokens is None:
            return []
        return [
            "Engine.custom does not know your image's env names for token limits, so "
            "max_input_tokens/max_total_tokens were used for sizing only; set them in env too"
        ]
