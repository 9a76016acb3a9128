"""CORS for browsers calling the invoker from another origin (opt-in: ``CORS_ALLOWED_ORIGINS``).

Stdlib only: this file ships in the Lambda asset.

The Fetch standard's CORS protocol (fetch.spec.whatwg.org, "CORS protocol"): before a
cross-origin ``POST`` with ``Content-Type: application/json`` or an ``Authorization`` header, a
browser sends a preflight, ``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``
and without credentials. The runtime answers it before any key check: ``204`` with
``Access-Control-Allow-Origin`` (the origin itself, or ``*`` when every origin is allowed),
``-Allow-Methods``, ``-Allow-Headers`` (``Authorization`` must be listed by name: ``*`` does
not cover it) and ``-Max-Age``; an origin not allowed gets a ``403`` without any CORS header,
which the browser reports as a CORS failure. Every other answer to an allowed origin, error or
stream, carries ``Access-Control-Allow-Origin`` and exposes ``x-request-id``; every answer
carries ``Vary: Origin`` once CORS is on, as its headers depend on the request's origin.

Without ``CORS_ALLOWED_ORIGINS`` nothing here runs: ``OPTIONS`` is a 405 as on any path that
does not take it, and no answer carries a CORS header.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message

#: The methods the runtime serves a browser (``runtime/server.py``'s paths).
_METHODS = "GET, HEAD, POST"
_EXPOSED = "x-request-id"
ANY_ORIGIN = "*"


@dataclass(frozen=True)
class CorsPolicy:
    """Which origins may call, with which request headers, and how long a preflight lasts.

    :param origins: ``scheme://host[:port]`` each, lower-case, or ``("*",)`` for any origin.
    :param headers: the request headers a browser may send (``Access-Control-Allow-Headers``).
    :param max_age: seconds a browser may keep a preflight's answer.
    """

    origins: tuple[str, ...]
    headers: tuple[str, ...]
    max_age: int

    def allowed(self, origin: str | None) -> str | None:
        """The ``Access-Control-Allow-Origin`` value for ``origin``, or None if not allowed."""
        if not origin:
            return None
        if ANY_ORIGIN in self.origins:
            return ANY_ORIGIN
        return origin if origin.lower() in self.origins else None

    @staticmethod
    def is_preflight(command: str, headers: Message) -> bool:
        return (
            command == "OPTIONS"
            and bool(headers.get("Origin"))
            and bool(headers.get("Access-Control-Request-Method"))
        )

    def preflight_headers(self, allow_origin: str) -> list[tuple[str, str]]:
        return [
            *self.answer_headers(allow_origin),
            ("Access-Control-Allow-Methods", _METHODS),
            ("Access-Control-Allow-Headers", ", ".join(self.headers)),
            ("Access-Control-Max-Age", str(self.max_age)),
        ]

    @staticmethod
    def answer_headers(allow_origin: str | None) -> list[tuple[str, str]]:
        """The CORS headers of an answer: ``Vary`` always, the rest for an allowed origin."""
        if allow_origin is None:
            return [("Vary", "Origin")]
        return [
            ("Access-Control-Allow-Origin", allow_origin),
            ("Access-Control-Expose-Headers", _EXPOSED),
            ("Vary", "Origin"),
        ]


def parse_list(raw: str) -> tuple[str, ...]:
    """A comma-separated environment value as its non-empty items, stripped."""
    return tuple(item.strip() for item in raw.split(",") if item.strip())
