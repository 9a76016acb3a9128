"""curl as the README's calls run it: one helper, so the client tests never skip without it."""

from __future__ import annotations

import shutil
import subprocess

__all__ = ["curl"]


def curl(*args: str, timeout: float) -> str:
    """curl's stdout; fails (not skips) when curl is missing, since the README's calls use it."""
    path = shutil.which("curl")
    assert path, "curl is not installed: the client tests run the README's curl calls"
    done = subprocess.run(
        [path, "-sS", "-N", "--max-time", str(timeout), *args],
        capture_output=True, text=True, check=True, timeout=timeout * 2,
    )  # fmt: skip
    return done.stdout
