"""The ``cdk`` commands of a page, checked against the option table of the pinned CDK CLI:
``node_modules/aws-cdk/lib/cli/cli-type-registry.json``, the table the CLI builds its yargs
parser from and checks the options it is given against (aws-cdk's
``lib/cli/util/check-unknown-options.js``, which warns "Unknown option(s): ... These will be
ignored"). Read the way the CLI reads it:

- the command is one of ``commands`` or one of a command's ``aliases`` (``ls``, ``synthesize``);
- each ``--flag`` is one of the command's ``options`` or of ``globalOptions``, by its name or
  an ``alias`` (a one-letter alias as ``-x``); a ``boolean`` option also as ``--no-<flag>``
  (yargs' negation), and as its ``negativeAlias`` (``deploy -R``);
- ``--flag=value`` is the flag ``--flag``.

No start-up of the CLI is needed: the table is a file of the installed package, and the
package is the version ``package.json`` pins (a test checks it)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["CLI_PACKAGE", "REGISTRY", "options", "problems"]

ROOT = Path(__file__).resolve().parent.parent.parent
CLI_PACKAGE = ROOT / "node_modules" / "aws-cdk"
REGISTRY = CLI_PACKAGE / "lib" / "cli" / "cli-type-registry.json"


@cache
def _registry() -> dict[str, Any]:
    table: dict[str, Any] = json.loads(REGISTRY.read_text())
    return table


def _command(name: str) -> str | None:
    """The command ``name`` stands for (itself or the command it is an alias of), or None."""
    for command, spec in _registry()["commands"].items():
        if name == command or name in spec.get("aliases", []):
            return str(command)
    return None


def _spellings(name: str, spec: dict[str, Any]) -> set[str]:
    """How an option is written on the command line."""
    alias = spec.get("alias", [])
    names = [name, *([alias] if isinstance(alias, str) else alias)]
    spelled = {f"-{n}" if len(n) == 1 else f"--{n}" for n in names}
    if spec.get("type") == "boolean":
        spelled |= {f"--no-{n}" for n in names if len(n) > 1}
    if "negativeAlias" in spec:
        spelled.add(f"-{spec['negativeAlias']}")
    return spelled


@cache
def options(command: str) -> frozenset[str]:
    """Every spelling of every option ``cdk <command>`` takes, its own and the global ones."""
    table = _registry()
    specs = {**table["globalOptions"], **table["commands"][command].get("options", {})}
    return frozenset(s for name, spec in specs.items() for s in _spellings(name, spec))


def problems(words: list[str]) -> list[str]:
    """What the pinned CLI would not take in ``cdk <words>``: an unknown command, or an option
    that is not the command's (each with the fix)."""
    if not words:
        return ["cdk without a command"]
    command = _command(words[0])
    if command is None:
        return [f"cdk has no command {words[0]!r}; its commands: {sorted(_registry()['commands'])}"]
    found = []
    for word in words[1:]:
        flag = word.split("=", 1)[0]
        if flag.startswith("-") and flag != "-" and flag not in options(command):
            found.append(
                f"{flag} is not an option of cdk {command} (nor a global one) in the pinned CLI; "
                f"see cdk {command} --help"
            )
    return found
