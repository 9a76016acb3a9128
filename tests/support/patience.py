"""How long a test waits for what normally takes far less, on a machine that may be busy.

The tests wait on events: a process says it is ready by a line on its stdout, a subprocess
ends, a socket answers. A bound on such a wait only keeps a broken run from hanging the
suite; it is never what a test measures. Every such bound is ``patience(seconds)``: a bound
generous on an idle machine, multiplied by one factor, ``CONSTRUCTS_LLM_TEST_PATIENCE``
(default 1), read here and nowhere else. On a machine that is slower still (a loaded CI
runner, an emulated architecture), raise the factor: ``CONSTRUCTS_LLM_TEST_PATIENCE=4 make
test``.
"""

from __future__ import annotations

import os

PATIENCE_VARIABLE = "CONSTRUCTS_LLM_TEST_PATIENCE"


def _factor() -> float:
    raw = os.environ.get(PATIENCE_VARIABLE, "1")
    try:
        factor = float(raw)
    except ValueError:
        raise ValueError(f"{PATIENCE_VARIABLE} must be a number such as 2, got {raw!r}") from None
    if not factor >= 1:  # also refuses NaN
        raise ValueError(f"{PATIENCE_VARIABLE} must be 1 or more, got {raw!r}")
    return factor


FACTOR = _factor()
"""The factor every bound is multiplied by."""


def patience(seconds: float) -> float:
    """The bound on a wait that takes far less than ``seconds`` on an idle machine."""
    return seconds * FACTOR
