"""Checks of an S3 object key or key prefix as a user writes it inside a bucket: the key alone
(not an ``s3://`` URI), with no leading ``/``, and a folder's prefix ending in ``/``. The
weights' prefix and archive key (``model/source_checks.py``) and an asynchronous endpoint's
folders (``hosting/async_inference.py``) share them; each keeps its own example and reason."""

from __future__ import annotations

from constructs_llm.problems import Problem


def key_problem(prop: str, key: str, *, what: str) -> Problem | None:
    """``key`` (a string known at synth) given as a URI or with a leading ``/``; ``what`` it
    is inside the bucket (``object key``, ``key prefix``)."""
    if key.startswith("s3://"):
        return Problem.of(prop, key, f"{prop} is the {what} inside the bucket, got the URI {key!r}")
    if key.startswith("/"):
        return Problem.of(
            prop, key, f"{prop} must not start with '/', got {key!r};", f"use {key.lstrip('/')!r}"
        )
    return None


def folder_problem(prop: str, prefix: str, *, why: str) -> Problem | None:
    """A folder's ``prefix`` without its closing ``/``; ``why`` the slash matters there."""
    if prefix.endswith("/"):
        return None
    return Problem.of(
        prop, prefix, f"{prop} must end with '/', got {prefix!r};", f"use {prefix + '/'!r} ({why})"
    )
