"""The repository as a fresh clone has it, copied to a folder of its own: what the README's
install and the client's build read, without venvs, node_modules or build output."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

__all__ = ["checkout_copy"]

ROOT = Path(__file__).resolve().parent.parent.parent


def checkout_copy(target: Path) -> Path:
    """The repository's files as a clone has them (tracked or new, not ignored), copied to
    ``target``."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target
