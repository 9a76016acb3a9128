"""The example stacks' templates as committed fixtures: a changed logical ID replaces a user's
resource on their next deploy, so any change to a template is a reviewed change to its fixture.

Asset hashes (the invoker's code asset) are replaced by a placeholder: they follow every byte of
the runtime's source and change no resource. Refresh after a reviewed change with
``python -m tests.support.templates cdk.out`` (after ``make synth``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "templates"
_ASSET_HASH = re.compile(r"[0-9a-f]{64}")


def normalized(template: dict[str, Any]) -> str:
    """The template as stable text: sorted keys, asset hashes replaced."""
    text = json.dumps(template, indent=1, sort_keys=True)
    return _ASSET_HASH.sub("<asset-hash>", text) + "\n"


def fixture(stack: str) -> str:
    return (FIXTURES / f"{stack}.template.json").read_text()


def refresh(cloud_assembly: Path) -> list[Path]:
    """Writes every template of ``cloud_assembly`` as a fixture (normalized)."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(cloud_assembly.glob("*.template.json")):
        target = FIXTURES / path.name
        target.write_text(normalized(json.loads(path.read_text())))
        written.append(target)
    return written


if __name__ == "__main__":
    for path in refresh(Path(sys.argv[1] if len(sys.argv) > 1 else "cdk.out")):
        print(path)
