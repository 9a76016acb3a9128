"""The error a request gets when it cannot be served. Stdlib only: ships in the Lambda."""

from __future__ import annotations

__all__ = ["RequestError"]


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


def unsupported(name: str, why: str) -> RequestError:
    """A 400 for a field the endpoint does not serve, naming it and saying why."""
    return RequestError(
        f"'{name}' is not supported by this endpoint: {why}",
        param=name,
        code="unsupported_parameter",
    )
