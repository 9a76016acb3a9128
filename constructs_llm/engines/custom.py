"""A serving image you bring, with the contract you state."""

from __future__ import annotations

from collections.abc import Mapping

from constructs_llm.container_image import ContainerImage
from constructs_llm.engine import Accelerator, Engine, EngineContext, EnvRule
from constructs_llm.engines._support import enum_value, planner_dtype
from constructs_llm.errors import ConfigurationError
from constructs_llm.instance_type import InstanceType
from constructs_llm.sizing import DTYPE_BYTES
from constructs_llm.streaming.runtime.events import RequestFormat, StreamFormat


class CustomEngine(Engine):
    """A user-described serving image. Create with :meth:`Engine.custom`."""

    __slots__ = (
        "_accelerator",
        "_env",
        "_image",
        "_model_env_name",
        "_request_format",
        "_stream_format",
        "_token_env_names",
        "_weight_dtype",
    )

    name = "custom"

    def __init__(
        self,
        *,
        image: ContainerImage,
        stream_format: StreamFormat | str,
        request_format: RequestFormat | str,
        accelerator: Accelerator | None,
        env: Mapping[str, str] | None,
        model_env_name: str | None,
        token_env_names: tuple[str, ...],
        weight_dtype: str | None,
    ) -> None:
        problems: list[str] = []
        if image is None:
            problems.append("image is required; pass ContainerImage.from_uri(...) or .dlc(...)")
        stream = enum_value(StreamFormat, stream_format, "stream_format", problems)
        request = enum_value(RequestFormat, request_format, "request_format", problems)
        if accelerator not in (None, "nvidia", "neuron"):
            problems.append(f"accelerator must be 'nvidia', 'neuron' or None, got {accelerator!r}")
        if weight_dtype is not None and planner_dtype(weight_dtype) is None:
            problems.append(
                f"weight_dtype must be one of {sorted(DTYPE_BYTES)}, got {weight_dtype!r}"
            )
        if isinstance(token_env_names, str):
            problems.append(
                f"token_env_names must be a tuple of names, got the string {token_env_names!r}"
            )
        if problems:
            raise ConfigurationError("Engine.custom: " + "; ".join(problems))
        self._image = image
        self._stream_format = stream or StreamFormat.AUTO
        self._request_format = request or RequestFormat.MESSAGES
        self._accelerator: Accelerator | None = accelerator
        self._env = dict(env or {})
        self._model_env_name = model_env_name
        self._token_env_names = tuple(token_env_names)
        self._weight_dtype = weight_dtype

    @property
    def accelerator(self) -> Accelerator | None:
        return self._accelerator

    @property
    def stream_format(self) -> StreamFormat:
        return self._stream_format

    @property
    def request_format(self) -> RequestFormat:
        return self._request_format

    @property
    def token_env_names(self) -> tuple[str, ...]:
        return self._token_env_names

    @property
    def weight_dtype(self) -> str | None:
        return self._weight_dtype

    def image_for(self, instance: InstanceType) -> ContainerImage:
        return self._image

    def derive_env(self, ctx: EngineContext) -> dict[str, str]:
        env = dict(self._env)
        if self._model_env_name:
            env[self._model_env_name] = ctx.model_location
        return env

    def _key_rules(self) -> Mapping[str, EnvRule]:
        return {self._model_env_name: EnvRule.MODEL} if self._model_env_name else {}

    def _hardware_problems(self, ctx: EngineContext) -> list[str]:
        return super()._hardware_problems(ctx) if self._accelerator else []

    def warnings(self, ctx: EngineContext, user_env: Mapping[str, str]) -> list[str]:
        if ctx.max_input_tokens is None and ctx.max_total_tokens is None:
            return []
        return [
            "Engine.custom does not know your image's env names for token limits, so "
            "max_input_tokens/max_total_tokens were used for sizing only; set them in env too"
        ]
