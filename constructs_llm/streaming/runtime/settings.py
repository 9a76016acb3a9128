"""Runtime configuration from the environment, and the one SageMaker client per container.

Stdlib + boto3 only: this file ships in the Lambda asset.

Environment (all strings):

======================== ============= ==================================================
variable                 default       meaning
======================== ============= ==================================================
PORT                     8080          port to listen on (the Lambda Web Adapter's too)
BIND_ADDRESS             127.0.0.1     address to bind; 0.0.0.0 to serve off the host
ENDPOINT_NAME            (required)    SageMaker endpoint to invoke (unless ROUTES is set)
INFERENCE_COMPONENT_NAME (unset)       inference component on that endpoint, if any
STREAM_FORMAT            auto          tgi | lmi_jsonlines | openai | auto
REQUEST_FORMAT           messages      messages | generate | embed (an embedding model)
MODEL_NAME               ENDPOINT_NAME echoed as ``model``, listed by ``GET /v1/models``
ENGINE                   (unset)       the engine (``formats.EngineName``): which request
                                       fields pass; unset, those every engine honours
VISION                   (unset)       off: the model takes no images (image parts: 400)
MAX_TOTAL_TOKENS         (unset)       the model's prompt + completion limit: a larger
                                       ``max_tokens`` is a 400 (unset: the engine checks)
MAX_BODY_BYTES           5242880       largest accepted request body (5 MiB)
UPSTREAM_READ_TIMEOUT    120           seconds of upstream silence that fail the stream
CLIENT_TIMEOUT           60            socket timeout towards the HTTP client (each read
                                       and write; an idle keep-alive connection's wait)
REQUEST_DEADLINE         30            seconds from a request's first byte to the end of
                                       its body (request line, headers, body): 408 past it
MAX_CONNECTIONS          128           connections served at once: 503 past it
HEARTBEAT_SECONDS        0 (off)       SSE keep-alive interval before the first token
CAPACITY_WAIT_SECONDS    0 (off)       how long a chat or Responses request is held while
                                       its inference component has no copy (scaled to
                                       zero): see capacity_wait.py (0 to 900)
API_KEYS_SECRET_ID       (unset)       secret (name or ARN) of the Bearer keys: see http/auth.py
API_KEYS_TTL_SECONDS     60            how long the keys are cached before a re-read
API_KEYS_STALE_SECONDS   300           how long past it the last good keys are served
                                       while refreshes fail (0: fail closed at once)
ORIGIN_SECRET_ID         (unset)       secret (name or ARN) CloudFront sends as
                                       ``x-origin-verify``: see http/origin_secret.py
CORS_ALLOWED_ORIGINS     (unset: off)  comma-separated origins (``https://app.example``)
                                       or ``*``: see http/cors.py
CORS_ALLOWED_HEADERS     see formats   comma-separated request headers browsers may send
CORS_MAX_AGE_SECONDS     7200          how long a browser keeps a preflight's answer
TOOLS                    see below     on | off: whether the engine serves tool calls
ROUTES                   (unset)       several models, routed by ``model``: see routing.py
METRICS_NAMESPACE        see metrics   CloudWatch namespace of the chat requests' metrics
                                       (``metrics.NAMESPACE``: ``ConstructsLlm/Invoker``)
REASONING_FIELD          reasoning     reasoning | reasoning_content | both: the name chat
                                       answers carry a model's thinking under
======================== ============= ==================================================

``ROUTES`` replaces ``ENDPOINT_NAME``, ``INFERENCE_COMPONENT_NAME``, ``STREAM_FORMAT``,
``REQUEST_FORMAT``, ``MODEL_NAME``, ``ENGINE`` and ``MAX_TOTAL_TOKENS`` (setting both is an
error): each route names its model, endpoint, component, formats, engine and limit.

``REQUEST_DEADLINE`` and ``MAX_CONNECTIONS`` keep slow and numerous clients from holding the
server (a "slowloris" sends one header line every few seconds, each read well within
``CLIENT_TIMEOUT``): a request whose line, headers and body have not all arrived that many
seconds after its first byte gets a 408 and the connection is closed; the clock starts at the
first byte, so an idle keep-alive connection waits ``CLIENT_TIMEOUT``. A connection
past ``MAX_CONNECTIONS`` gets a 503 (``Retry-After: 1``) and is closed without a thread of
its own. In Lambda one environment serves one request at a time, so the bound matters when
the runtime serves on its own (a container, a host); the 0.1 s floor of the deadline exists
for tests.

Without ``API_KEYS_SECRET_ID`` the runtime checks no keys: the function URL's ``AWS_IAM``
auth (or CloudFront's origin access control) decides who gets in.

``StreamingInvoker`` always sets ``TOOLS`` (or each route's ``"tools"``) from its target's
engine: ``on`` only where the engine's tool parsing is on. Unset, ``TOOLS`` defaults to ``on``
for ``REQUEST_FORMAT=messages`` (TGI's Messages API, vLLM,
SGLang and LMI's vLLM backend all take ``tools``; vLLM needs its tool-call parser enabled for
``tool_choice: "auto"``) and is ``off``, and cannot be turned on, for ``generate``, whose
API has no tools. With ``off``, a request with ``tools``, a ``tool_choice`` other than
``"none"`` or a tool turn in its messages gets a 400 naming the field, instead of an engine
that ignores them and answers without tools.

``HEARTBEAT_SECONDS`` (0, or 0.1 to 300) is opt-in, for a proxy that drops a silent origin
(CloudFront in front of a function URL gives up after 30 s by default). When set, a
``stream: true`` request whose first token has not arrived within that many seconds (counted
from before the SageMaker call) gets the ``200`` status line and SSE headers then, with a
``: keep-alive`` comment, and another comment every interval until the first token; from
then on it streams as usual. Clients ignore SSE comments; ``UPSTREAM_READ_TIMEOUT`` still
bounds the wait. The trade-off: once the heartbeat has committed the ``200``, a failure
before the first token can no longer be an HTTP error status, so it arrives in the stream as
``data: {"error": ...}`` then ``data: [DONE]``, like a failure after tokens. A client that
hangs up meanwhile is noticed at the first event, which then closes the upstream stream.
``stream: false`` requests never get a heartbeat: their status and JSON body are written
only once the answer is complete. The 0.1 s floor exists for tests; use seconds in practice.

boto3 honours ``AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`` (and ``AWS_ENDPOINT_URL``) natively, which
is how tests point the runtime at a local fake.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..formats import (
    DEFAULT_CORS_HEADERS,
    DEFAULT_CORS_MAX_AGE_S,
    DEFAULT_MAX_REQUEST_BYTES,
    MAX_REQUEST_BYTES,
    NAMESPACE,
    EngineName,
    Env,
    ReasoningField,
    RequestFormat,
    StreamFormat,
)
from .aws_clients import new_client
from .http.cors import ANY_ORIGIN, CorsPolicy, parse_list
from .routing import MAX_TOKENS_CEILING, Route, RoutingTable, parse_routes

_UPSTREAM_CONNECT_TIMEOUT = 10.0
# The first call plus one retry. Retries cover only the call: a broken stream is not resumed.
_UPSTREAM_MAX_ATTEMPTS = 2
_UPSTREAM_POOL = 64
_MIN_HEARTBEAT = 0.1
_MAX_HEARTBEAT = 300.0


class SettingsError(ValueError):
    """The environment does not describe a runnable server; the message lists every problem."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    endpoint_name: str = ""
    inference_component_name: str | None = None
    stream_format: StreamFormat = StreamFormat.AUTO
    request_format: RequestFormat = RequestFormat.MESSAGES
    model_name: str = ""
    engine: EngineName | None = None
    vision: bool | None = None  # the single target's: False refuses image parts
    port: int = 8080
    bind_address: str = "127.0.0.1"
    max_body_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    upstream_read_timeout: float = 120.0
    upstream_connect_timeout: float = _UPSTREAM_CONNECT_TIMEOUT
    client_timeout: float = 60.0
    heartbeat_seconds: float = 0.0  # 0: off
    capacity_wait_seconds: float = 0.0  # 0: a component with no copy is a 503 at once
    api_keys_secret_id: str | None = None  # None: no key check (IAM auth)
    api_keys_ttl: float = 60.0
    api_keys_stale_seconds: float = 300.0
    origin_secret_id: str | None = None  # None: no origin check (no distribution, or IAM)
    cors: CorsPolicy | None = None  # None: CORS off
    tools: bool | None = None  # None: on for the messages format, off for generate
    routes: tuple[Route, ...] = ()  # (): the single target above
    metrics_namespace: str = NAMESPACE
    max_total_tokens: int | None = None  # the single target's; None: not known
    request_deadline: float = 30.0
    max_connections: int = 128
    reasoning_field: ReasoningField = ReasoningField.REASONING

    @property
    def served_model(self) -> str:
        return self.model_name or self.endpoint_name

    @property
    def serves_tools(self) -> bool:
        """Whether tool-calling requests are forwarded (see ``TOOLS``)."""
        return self.tools_for(self.request_format)

    def tools_for(self, target: Route | RequestFormat) -> bool:
        """Whether requests to ``target`` (a route, or a route of that request format) forward
        tool calls: the route's own ``tools``, else ``TOOLS``; generate never does."""
        if isinstance(target, Route):
            if target.tools is not None:
                return target.tools
            target = target.request_format
        request_format = target
        if self.tools is None or request_format is RequestFormat.GENERATE:
            return request_format is RequestFormat.MESSAGES
        return self.tools

    def routing(self) -> RoutingTable:
        """The routes by model: ``ROUTES``, else the single target as one route."""
        if self.routes:
            return RoutingTable(self.routes)
        single = Route(
            model=self.served_model,
            endpoint_name=self.endpoint_name,
            inference_component_name=self.inference_component_name,
            stream_format=self.stream_format,
            request_format=self.request_format,
            engine=self.engine,
            vision=self.vision,
            max_total_tokens=self.max_total_tokens,
        )
        return RoutingTable([single])

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Read the settings, gathering every problem into one ``SettingsError``."""
        problems: list[str] = []
        endpoint = env.get(Env.ENDPOINT_NAME, "").strip()
        routes = _routes(env, problems)
        if not endpoint and not routes:
            problems.append("ENDPOINT_NAME is required: set it to the SageMaker endpoint's name")
        request_format = _enum(
            env, Env.REQUEST_FORMAT, RequestFormat, RequestFormat.MESSAGES, problems
        )
        settings = cls(
            endpoint_name=endpoint,
            inference_component_name=env.get(Env.INFERENCE_COMPONENT_NAME, "").strip() or None,
            stream_format=_enum(env, Env.STREAM_FORMAT, StreamFormat, StreamFormat.AUTO, problems),
            request_format=request_format,
            model_name=env.get(Env.MODEL_NAME, "").strip(),
            engine=_enum(env, Env.ENGINE, EngineName, None, problems),
            vision=_switch(env, Env.VISION, problems),
            port=int(_number(env, Env.PORT, 8080, 1, 65535, problems, integer=True)),
            bind_address=env.get(Env.BIND_ADDRESS, "").strip() or "127.0.0.1",
            max_body_bytes=int(
                _number(
                    env,
                    Env.MAX_BODY_BYTES,
                    DEFAULT_MAX_REQUEST_BYTES,
                    1,
                    MAX_REQUEST_BYTES,
                    problems,
                    integer=True,
                )
            ),
            upstream_read_timeout=_number(env, Env.UPSTREAM_READ_TIMEOUT, 120.0, 1, 3600, problems),
            client_timeout=_number(env, Env.CLIENT_TIMEOUT, 60.0, 1, 3600, problems),
            heartbeat_seconds=_heartbeat(env, problems),
            capacity_wait_seconds=_number(env, Env.CAPACITY_WAIT_SECONDS, 0.0, 0, 900, problems),
            api_keys_secret_id=env.get(Env.API_KEYS_SECRET_ID, "").strip() or None,
            api_keys_ttl=_number(env, Env.API_KEYS_TTL_SECONDS, 60.0, 0.1, 3600, problems),
            api_keys_stale_seconds=_number(
                env, Env.API_KEYS_STALE_SECONDS, 300.0, 0, 3600, problems
            ),
            origin_secret_id=env.get(Env.ORIGIN_SECRET_ID, "").strip() or None,
            cors=_cors(env, problems),
            tools=_tools(env, request_format, problems),
            routes=routes,
            metrics_namespace=_namespace(env, problems),
            max_total_tokens=_max_total_tokens(env, problems),
            request_deadline=_number(env, Env.REQUEST_DEADLINE, 30.0, 0.1, 3600, problems),
            max_connections=int(
                _number(env, Env.MAX_CONNECTIONS, 128, 1, 65535, problems, integer=True)
            ),
            reasoning_field=_enum(
                env, Env.REASONING_FIELD, ReasoningField, ReasoningField.REASONING, problems
            ),
        )
        if (
            routes
            and settings.tools
            and any(r.request_format is RequestFormat.GENERATE for r in routes)
        ):
            problems.append(
                "TOOLS=on needs every route to take messages: the generate API has no tool calling"
            )
        if problems:
            raise SettingsError("invalid runtime environment: " + "; ".join(problems))
        return settings


def _routes(env: Mapping[str, str], problems: list[str]) -> tuple[Route, ...]:
    """``ROUTES``, which replaces the single-target variables."""
    raw = env.get(Env.ROUTES, "").strip()
    if not raw:
        return ()
    both = [name for name in Env.SINGLE_TARGET if env.get(name, "").strip()]
    if both:
        problems.append(
            f"set ROUTES or {', '.join(both)}, not both: each route names its endpoint, "
            "component, formats and model"
        )
    return parse_routes(raw, problems)


def _enum(env: Mapping[str, str], name: str, kind: Any, default: Any, problems: list[str]) -> Any:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        problems.append(f"{name} must be one of {allowed} (got {raw!r})")
        return default


def _number(
    env: Mapping[str, str],
    name: str,
    default: float,
    low: float,
    high: float,
    problems: list[str],
    *,
    integer: bool = False,
) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(int(raw)) if integer else float(raw)
    except ValueError:
        problems.append(f"{name} must be a{'n integer' if integer else ' number'} (got {raw!r})")
        return default
    if not low <= value <= high:  # NaN fails this too
        shown = (f"{int(low)} and {int(high)}") if integer else f"{low:g} and {high:g}"
        problems.append(f"{name} must be between {shown} (got {raw!r})")
        return default
    return value


def _cors(env: Mapping[str, str], problems: list[str]) -> CorsPolicy | None:
    """``CORS_*``: None (off) without ``CORS_ALLOWED_ORIGINS``."""
    origins = tuple(
        o.lower().rstrip("/") for o in parse_list(env.get(Env.CORS_ALLOWED_ORIGINS, ""))
    )
    headers = parse_list(env.get(Env.CORS_ALLOWED_HEADERS, ""))
    max_age = int(
        _number(
            env, Env.CORS_MAX_AGE_SECONDS, DEFAULT_CORS_MAX_AGE_S, 0, 86400, problems, integer=True
        )
    )
    if not origins:
        if headers or env.get(Env.CORS_MAX_AGE_SECONDS, "").strip():
            problems.append(
                "CORS_ALLOWED_HEADERS and CORS_MAX_AGE_SECONDS need CORS_ALLOWED_ORIGINS: "
                "set the origins browsers may call from"
            )
        return None
    bad = [o for o in origins if o != ANY_ORIGIN and not o.startswith(("https://", "http://"))]
    if bad or (ANY_ORIGIN in origins and len(origins) > 1):
        problems.append(
            "CORS_ALLOWED_ORIGINS must be '*' alone or origins such as https://app.example.com "
            f"(got {env.get(Env.CORS_ALLOWED_ORIGINS, '')[:300]!r})"
        )
        return None
    return CorsPolicy(origins=origins, headers=headers or DEFAULT_CORS_HEADERS, max_age=max_age)


def _max_total_tokens(env: Mapping[str, str], problems: list[str]) -> int | None:
    """``MAX_TOTAL_TOKENS``: the single target's limit, or None when it is not known."""
    if not env.get(Env.MAX_TOTAL_TOKENS, "").strip():
        return None
    return int(_number(env, Env.MAX_TOTAL_TOKENS, 1, 1, MAX_TOKENS_CEILING, problems, integer=True))


def _tools(env: Mapping[str, str], fmt: RequestFormat, problems: list[str]) -> bool | None:
    """``TOOLS``: None (the format's default), or on/off as set."""
    raw = env.get(Env.TOOLS, "").strip().lower()
    if not raw:
        return None
    if raw not in ("on", "off"):
        problems.append(f"TOOLS must be on or off (got {raw!r})")
        return None
    if raw == "on" and fmt is RequestFormat.GENERATE:
        problems.append(
            "TOOLS=on needs REQUEST_FORMAT=messages: the generate API has no tool calling"
        )
        return None
    if raw == "on" and fmt is RequestFormat.EMBED:
        problems.append(
            "TOOLS=on needs REQUEST_FORMAT=messages: an embedding model has no tool calling"
        )
        return None
    return raw == "on"


def _switch(env: Mapping[str, str], name: str, problems: list[str]) -> bool | None:
    """An on/off variable: None when unset."""
    raw = env.get(name, "").strip().lower()
    if not raw:
        return None
    if raw not in ("on", "off"):
        problems.append(f"{name} must be on or off (got {raw!r})")
        return None
    return raw == "on"


def _namespace(env: Mapping[str, str], problems: list[str]) -> str:
    """A CloudWatch namespace: 1-255 characters, not starting with ``:`` or ``AWS/``
    (PutMetricData's rules, which metrics extracted from logs follow)."""
    raw = env.get(Env.METRICS_NAMESPACE, "").strip()
    if not raw:
        return NAMESPACE
    if len(raw) > 255 or raw.startswith(("AWS/", ":")):
        problems.append(
            "METRICS_NAMESPACE must be 1-255 characters, not starting with ':' or 'AWS/' "
            f"(got {raw[:300]!r})"
        )
        return NAMESPACE
    return raw


def _heartbeat(env: Mapping[str, str], problems: list[str]) -> float:
    """0 (off), or an interval from ``_MIN_HEARTBEAT`` to ``_MAX_HEARTBEAT`` seconds."""
    raw = env.get(Env.HEARTBEAT_SECONDS, "").strip()
    try:
        value = float(raw or 0)
    except ValueError:
        value = -1.0
    if value == 0:
        return 0.0
    if _MIN_HEARTBEAT <= value <= _MAX_HEARTBEAT:  # NaN fails this too
        return value
    problems.append(
        f"HEARTBEAT_SECONDS must be 0 (off) or a number of seconds between {_MIN_HEARTBEAT:g}"
        f" and {_MAX_HEARTBEAT:g} (got {raw!r})"
    )
    return 0.0


_client_lock = threading.Lock()
_clients: dict[tuple[float, float], Any] = {}


def sagemaker_client(settings: Settings) -> Any:
    """The container's sagemaker-runtime client, created once and shared by all threads.

    boto3 clients are thread-safe once built; building one takes tens of milliseconds, so it
    happens once per container (per distinct timeout pair), under a lock.
    """
    key = (settings.upstream_connect_timeout, settings.upstream_read_timeout)
    client = _clients.get(key)
    if client is not None:
        return client
    with _client_lock:
        client = _clients.get(key)
        if client is None:
            client = new_sagemaker_client(settings)
            _clients[key] = client
    return client


def new_sagemaker_client(settings: Settings, *, validate_parameters: bool = False) -> Any:
    """A fresh sagemaker-runtime client with the runtime's timeouts and retry policy.

    Without botocore's parameter validation unless ``validate_parameters``: "You can disable
    parameter validation for performance reasons" (botocore 1.44.5, ``Config``'s
    ``parameter_validation``; off, ``create_serializer`` leaves out its
    ``ParamValidationDecorator``, which checks each call's parameters against the operation's
    input shape: required members, types, minimum lengths and values). The runtime builds every
    call itself (``upstream._call``): strings for the endpoint, component and content type,
    the body as bytes, a variant checked against SageMaker's name pattern
    (``routing.target_variant``) and a prefix-aware id of 1 to 64 printable characters
    (``prefix_aware_id.py``), so that check never fails on them; it cost about 0.06 ms of CPU
    per call (median of 300 calls each way, in turns). Signing, TLS, timeouts and retries are
    untouched."""
    return new_client(
        "sagemaker-runtime",
        connect_timeout=settings.upstream_connect_timeout,
        read_timeout=settings.upstream_read_timeout,
        max_attempts=_UPSTREAM_MAX_ATTEMPTS,
        max_pool_connections=_UPSTREAM_POOL,
        tcp_keepalive=True,
        parameter_validation=validate_parameters,
    )
