"""The error a request gets when it cannot be served, and OpenAI's error envelope every error
answer carries. Stdlib only: this file ships in the Lambda asset."""

from __future__ import annotations

from typing import Any


class RequestError(Exception):
    """The request cannot be served; maps to a 4xx with an OpenAI-shaped error body."""

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = "invalid_value",
        status: int = 400,
        error_type: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status = status
        self.error_type = error_type


def unsupported_value(message: str, *, param: str) -> RequestError:
    """A 400 for a value the gateway does not serve (OpenAI's ``unsupported_parameter``), on
    ``param``, in ``message``'s words."""
    return RequestError(message, param=param, code="unsupported_parameter")


def unsupported(name: str, why: str) -> RequestError:
    """A 400 for a field the endpoint does not serve, naming it and saying why."""
    return unsupported_value(f"'{name}' is not supported by this endpoint: {why}", param=name)


def unrecognized(name: str, api: str) -> RequestError:
    """A 400 for a field outside the schema of ``api`` (its name as OpenAI gives it), in the
    words OpenAI uses."""
    return RequestError(
        f"unrecognized request argument supplied: '{name}'; this endpoint serves the "
        f"OpenAI {api} fields only",
        param=name,
        code="unknown_parameter",
    )


def error_object(
    message: str,
    *,
    error_type: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    """The OpenAI error envelope: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}
