"""The ``aws`` commands of a page, checked against the service models the AWS CLI is built
from (botocore's, as pinned here), the way the CLI maps them:

- the service is botocore's service name (the CLI's ``s3api`` is botocore's ``s3``);
- the operation is the API operation's name in lower case with hyphens
  (``botocore.xform_name(name, "-")``: ``DescribeEndpoint`` -> ``describe-endpoint``),
  or ``wait <waiter>`` for one of the service's waiters;
- each ``--flag`` is a member of the operation's input shape, hyphenated the same way
  (``EndpointName`` -> ``--endpoint-name``; a boolean member also as ``--no-<flag>``) or as
  the CLI renames it (``ARGUMENT_RENAMES`` and ``HIDDEN_ALIASES`` of the CLI's
  ``awscli/customizations/argrename.py``, read from the AWS CLI v1 that the pinned
  ``aws-cdk.asset-awscli-v1`` package ships: ``sns subscribe --notification-endpoint``), one of
  the pagination options the CLI adds to a paginated operation, or a global option;
- every member the input shape requires is given;
- a value that starts with ``{`` or ``[`` is JSON, and the keys of its objects are members of
  the shape the flag takes;
- a ``--query`` is a JMESPath expression whose field names are members of the operation's
  output.

Commands are read from fenced ``bash`` blocks and from code spans that start with ``aws``;
lines continued with ``\\`` are joined, ``$(...)`` is read as a command of its own."""

from __future__ import annotations

import ast
import importlib.metadata
import io
import json
import re
import shlex
import tarfile
import zipfile
from dataclasses import dataclass
from functools import cache
from typing import Any

import botocore.session
import jmespath
from botocore import xform_name
from botocore.model import Shape

__all__ = ["GLOBAL_OPTIONS", "CliCommand", "commands", "problems"]

#: Options every command takes (``aws help``'s "Global Options"); those that take no value
#: are in ``_GLOBAL_SWITCHES``.
GLOBAL_OPTIONS = frozenset(
    {
        "--region",
        "--output",
        "--query",
        "--profile",
        "--endpoint-url",
        "--color",
        "--ca-bundle",
        "--cli-read-timeout",
        "--cli-connect-timeout",
        "--cli-binary-format",
        "--cli-input-json",
        "--cli-input-yaml",
        "--generate-cli-skeleton",
    }
)
_GLOBAL_SWITCHES = frozenset(
    {"--debug", "--no-verify-ssl", "--no-paginate", "--no-sign-request", "--no-cli-pager"}
)
_PAGINATION_OPTIONS = frozenset({"--max-items", "--starting-token", "--page-size"})
_SERVICE_RENAMES = {"s3api": "s3"}  # the CLI's command name -> botocore's service name


@dataclass(frozen=True)
class CliCommand:
    """One ``aws`` command as written (``text``) and its words after ``aws``."""

    text: str
    words: tuple[str, ...]


def commands(markdown: str) -> list[CliCommand]:
    """Every ``aws`` command of a Markdown page."""
    found: list[CliCommand] = []
    for block in re.findall(r"^ *```(?:bash|sh|console)\n(.*?)^ *```", markdown, re.S | re.M):
        for line in _logical_lines(block):
            found += _commands_in(line)
    prose = re.sub(r"^ *```.*?^ *```", "", markdown, flags=re.S | re.M)
    for span in re.findall(r"`(aws [^`]+)`", prose):
        found += _commands_in(span)
    return found


def problems(command: CliCommand) -> list[str]:
    """What the AWS CLI would refuse in ``command``, each naming the word and the fix."""
    words = list(command.words)
    if len(words) < 2:
        return [f"{command.text!r}: no service and operation"]
    service_name = _SERVICE_RENAMES.get(words[0], words[0])
    session = _session()
    if words[0] == "s3":
        return [f"{command.text!r}: {p}" for p in _s3_problems(words[1:])]
    if service_name not in session.get_available_services():
        return [f"{command.text!r}: no service {words[0]!r} in the CLI's service models"]
    model = session.get_service_model(service_name)
    operations = {xform_name(op, "-"): op for op in model.operation_names}
    rest = words[2:]
    if words[1] == "wait":
        waiters = _waiters(service_name)
        if not rest or rest[0] not in waiters:
            return [f"{command.text!r}: {service_name} has no waiter {' '.join(rest[:1])!r}"]
        operation, rest = waiters[rest[0]], rest[1:]
    elif words[1] in operations:
        operation = operations[words[1]]
    else:
        return [f"{command.text!r}: {service_name} has no operation {words[1]!r}"]
    op_model = model.operation_model(operation)
    found = _argument_problems(op_model, rest, words[0], words[1])
    return [f"{command.text!r}: {p}" for p in found]


# -- reading commands ----------------------------------------------------------------------------


def _logical_lines(block: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", block)
    return [line for line in joined.splitlines() if not line.lstrip().startswith("#")]


def _commands_in(text: str) -> list[CliCommand]:
    """The ``aws`` commands in one shell line, ``$(...)`` substitutions included."""
    flat, inner = _substitutions(text)
    found = [c for part in inner for c in _commands_in(part)]
    lexer = shlex.shlex(flat, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    tokens = list(lexer)
    for start, token in enumerate(tokens):
        if token == "aws" and (start == 0 or tokens[start - 1] in (";", "&&", "||", "|")):
            words = []
            for word in tokens[start + 1 :]:
                # a separator, or a redirection: what follows is the shell's, not the CLI's
                if word in (";", "&&", "||", "|", "&", "<") or re.match(r"[0-9&]?>", word):
                    break
                words.append(word)
            found.append(CliCommand(text=" ".join(["aws", *words]), words=tuple(words)))
    return found


def _substitutions(text: str) -> tuple[str, list[str]]:
    """``text`` with each ``$(...)`` (outside single quotes) replaced by a placeholder word,
    and the commands inside them."""
    out: list[str] = []
    inner: list[str] = []
    i, quote = 0, ""
    while i < len(text):
        char = text[i]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif char == "'" and quote != '"':
            quote = "'"
        elif char == '"':
            quote = "" if quote == '"' else '"'
        elif text.startswith("$(", i):
            end = _closing(text, i + 2)
            inner.append(text[i + 2 : end])
            out.append("SUBSTITUTED")
            i = end + 1
            continue
        out.append(char)
        i += 1
    return "".join(out), inner


def _closing(text: str, start: int) -> int:
    depth, quote = 1, ""
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
    raise ValueError(f"unbalanced $( in {text!r}")


# -- checking arguments --------------------------------------------------------------------------


@cache
def _session() -> Any:
    return botocore.session.get_session()


@cache
def _waiters(service_name: str) -> dict[str, str]:
    try:
        model = _session().get_waiter_model(service_name)
    except Exception:  # a service without waiters
        return {}
    return {xform_name(name, "-"): model.get_waiter(name).operation for name in model.waiter_names}


def _argument_problems(op_model: Any, words: list[str], service: str, command: str) -> list[str]:
    shape = op_model.input_shape
    members: dict[str, Shape] = dict(shape.members) if shape is not None else {}
    flags = {_cli_flag(service, command, name): name for name in members}
    flags.update(_aliases(service, command, flags))
    pages = _paginated(_SERVICE_RENAMES.get(service, service), op_model.name)
    found: list[str] = []
    given: set[str] = set()
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("--"):
            found.append(f"{word!r} is not an option; options start with --")
            continue
        flag, _, inline = word.partition("=")
        if flag in _GLOBAL_SWITCHES:
            continue
        member = flags.get(flag)
        negated = flags.get("--" + flag.removeprefix("--no-")) if flag.startswith("--no-") else None
        if negated is not None and members[negated].type_name == "boolean":
            given.add(negated)
            continue
        if member is not None and members[member].type_name == "boolean" and not inline:
            given.add(member)
            continue
        takes_value = (
            member is not None or flag in GLOBAL_OPTIONS or (pages and flag in _PAGINATION_OPTIONS)
        )
        if not inline and index < len(words) and not words[index].startswith("--"):
            value, index = words[index], index + 1
        else:
            value = inline
        if not takes_value:
            close = [f for f in flags if f.replace("-", "")[:6] == flag.replace("-", "")[:6]]
            hint = f"; did you mean {close[0]}?" if close else ""
            found.append(
                f"{flag} is not an option of {op_model.name} (its input members: "
                f"{', '.join(sorted(flags)) or 'none'}){hint}"
            )
        elif not value:
            found.append(f"{flag} has no value")
        elif member is not None:
            given.add(member)
            found += _json_problems(flag, value, members[member])
        elif flag == "--query":
            found += _query_problems(value, op_model)
    required = shape.required_members if shape is not None else []
    missing = [_cli_flag(service, command, m) for m in required if m not in given]
    if missing:
        found.append(f"{op_model.name} requires {', '.join(missing)}")
    return found


def _cli_flag(service: str, command: str, member: str) -> str:
    """The CLI's option for an input member: hyphenated, unless the CLI renames it."""
    name = xform_name(member, "-")
    renames, _ = _cli_renames()
    for key in (f"{service}.{command}.{name}", f"{service}.*.{name}", f"*.*.{name}"):
        if key in renames:
            return f"--{renames[key]}"
    return f"--{name}"


def _aliases(service: str, command: str, flags: dict[str, str]) -> dict[str, str]:
    """The hidden aliases the CLI also accepts for this command's options."""
    _, aliases = _cli_renames()
    found = {}
    for flag, member in flags.items():
        name = flag.removeprefix("--")
        for key in (f"{service}.{command}.{name}", f"{service}.*.{name}", f"*.*.{name}"):
            if key in aliases:
                found[f"--{aliases[key]}"] = member
    return found


@cache
def _cli_layer() -> zipfile.ZipFile:
    """The AWS CLI v1 of the CDK's awscli layer asset (the pinned ``aws-cdk.asset-awscli-v1``)."""
    (archive,) = (
        f.locate()
        for f in importlib.metadata.files("aws-cdk.asset-awscli-v1") or []
        if f.name.endswith(".jsii.tgz")
    )
    with tarfile.open(archive) as tgz:
        member = tgz.extractfile("package/lib/layer.zip")
        assert member is not None
        return zipfile.ZipFile(io.BytesIO(member.read()))


class _Code:
    """A value of the tables that is code, not a literal (an argparse action such as
    ``AppendFilter``, a help text built by a call): whatever is done with it gives itself."""

    def __getattr__(self, name: str) -> _Code:
        return self

    def __call__(self, *args: object, **kwargs: object) -> _Code:
        return self

    def __add__(self, other: object) -> _Code:
        return self

    __radd__ = __add__


class _Names(dict[str, Any]):
    """The names the tables use: the module's literals, else code (:class:`_Code`)."""

    def __missing__(self, key: str) -> _Code:
        return _Code()


@cache
def _s3_commands() -> dict[str, tuple[frozenset[str], frozenset[str], tuple[int, int]]]:
    """The CLI's own ``aws s3`` commands (``awscli/customizations/s3/subcommands.py``, read as
    data): each command's ``NAME`` -> its options and how many paths it takes (least, most).
    The module's tables are literals built from literals of the module, evaluated in order."""
    source = _cli_layer().read("awscli/awscli/customizations/s3/subcommands.py").decode()
    namespace: dict[str, Any] = {}
    found: dict[str, tuple[frozenset[str], frozenset[str], tuple[int, int]]] = {}

    def value(node: ast.expr, local: dict[str, Any] | None = None) -> Any:
        code = compile(ast.Expression(node), "subcommands.py", "eval")
        return eval(code, {}, _Names({**namespace, **(local or {})}))

    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                namespace[node.targets[0].id] = value(node.value)
            except Exception:  # a value built from code: not one of the tables
                continue
        elif isinstance(node, ast.ClassDef):
            local: dict[str, Any] = {}  # the class's own literals (USAGE, NAME, ...)
            for field in node.body:
                if isinstance(field, ast.Assign) and isinstance(field.targets[0], ast.Name):
                    try:
                        local[field.targets[0].id] = value(field.value, local)
                    except Exception:  # built from code
                        continue
            if "NAME" not in local or "ARG_TABLE" not in local:
                continue
            table = local["ARG_TABLE"]
            unread = [a for a in table if not isinstance(a, dict)]
            assert not unread, f"s3 {local['NAME']}: options not read as data: {unread}"
            options = frozenset(f"--{a['name']}" for a in table if not a.get("positional_arg"))
            switches = frozenset(
                f"--{a['name']}" for a in table if a.get("action") in ("store_true", "store_false")
            )
            nargs = [a.get("nargs", 1) for a in table if a.get("positional_arg")]
            least = sum(0 if n == "?" else n for n in nargs)
            most = sum(1 if n == "?" else n for n in nargs)
            found[local["NAME"]] = (options, switches, (least, most))
    # sync's strategies add their own options (--delete, --size-only, --exact-timestamps)
    strategies = [_strategy_option(n) for n in _cli_layer().namelist() if "/syncstrategy/" in n]
    options, switches, counts = found["sync"]
    for option in (o for o in strategies if o is not None):
        options |= {f"--{option['name']}"}
        if option.get("action") in ("store_true", "store_false"):
            switches |= {f"--{option['name']}"}
    found["sync"] = (options, switches, counts)
    return found


def _strategy_option(name: str) -> dict[str, Any] | None:
    """The option a sync strategy module declares (its module-level ``{'name': ...}``)."""
    if not name.endswith(".py"):
        return None
    for node in ast.parse(_cli_layer().read(name).decode()).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            value = eval(compile(ast.Expression(node.value), name, "eval"), {}, _Names())
            if isinstance(value, dict) and "name" in value:
                return value
    return None


def _s3_problems(words: list[str]) -> list[str]:
    """An ``aws s3`` command the CLI lacks, an option it does not take, or a wrong path count."""
    commands = _s3_commands()
    if not words or words[0] not in commands:
        return [f"the CLI's s3 has no command {' '.join(words[:1])!r}; it has {sorted(commands)}"]
    options, switches, (least, most) = commands[words[0]]
    known = options | GLOBAL_OPTIONS | _GLOBAL_SWITCHES
    flags = [w.split("=")[0] for w in words[1:] if w.startswith("--")]
    problems = [f"{f!r} is not an option of s3 {words[0]}" for f in flags if f not in known]
    takes_value = (options | GLOBAL_OPTIONS) - switches - _GLOBAL_SWITCHES
    paths = [
        word
        for word, before in zip(words[1:], words[:-1], strict=True)
        if not word.startswith("--") and not (before in takes_value and "=" not in before)
    ]
    if not least <= len(paths) <= most:
        problems.append(f"s3 {words[0]} takes {least}-{most} paths, got {len(paths)}")
    return problems


@cache
def _cli_renames() -> tuple[dict[str, str], dict[str, str]]:
    """``ARGUMENT_RENAMES`` and ``HIDDEN_ALIASES`` of the AWS CLI v1 in the CDK's awscli
    layer asset (its ``awscli/customizations/argrename.py``), read as data."""
    source = _cli_layer().read("awscli/awscli/customizations/argrename.py").decode()
    tables: dict[str, dict[str, str]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign) or not isinstance(node.targets[0], ast.Name):
            continue
        if node.targets[0].id in ("ARGUMENT_RENAMES", "HIDDEN_ALIASES"):
            tables[node.targets[0].id] = ast.literal_eval(node.value)
    return tables["ARGUMENT_RENAMES"], tables["HIDDEN_ALIASES"]


def _query_problems(query: str, op_model: Any) -> list[str]:
    """A ``--query`` that JMESPath cannot parse, or that names a field the output lacks."""
    try:
        tree = jmespath.compile(query).parsed
    except jmespath.exceptions.JMESPathError as err:
        return [f"--query {query!r} is not JMESPath: {err}"]
    known = _member_names(op_model.output_shape)
    unknown = sorted({name for name in _fields(tree) if name not in known})
    if unknown:
        return [f"--query names {', '.join(unknown)}, which {op_model.name}'s output lacks"]
    return []


def _fields(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["value"]] if node.get("type") == "field" else []
        return own + [f for child in node.get("children", []) for f in _fields(child)]
    return []


def _member_names(shape: Shape | None, seen: set[str] | None = None) -> set[str]:
    """Every member name reachable from ``shape``."""
    seen = set() if seen is None else seen
    if shape is None or shape.name in seen:
        return set()
    seen.add(shape.name)
    names: set[str] = set()
    if shape.type_name == "structure":
        for name, member in shape.members.items():
            names |= {name} | _member_names(member, seen)
    elif shape.type_name == "list":
        names |= _member_names(shape.member, seen)
    elif shape.type_name == "map":
        names |= _member_names(shape.value, seen)
    return names


@cache
def _paginated(service_name: str, operation: str) -> bool:
    """Whether the CLI pages ``operation`` (and so adds ``--max-items`` and the like)."""
    try:
        _session().get_paginator_model(service_name).get_paginator(operation)
    except Exception:  # no paginators for the service, or none for the operation
        return False
    return True


def _json_problems(flag: str, value: str, shape: Shape) -> list[str]:
    if not value.startswith(("{", "[")):
        return []
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as err:
        return [f"{flag} {value!r} is not valid JSON: {err}"]
    return [f"{flag}: {p}" for p in _shape_problems(parsed, shape, "")]


def _shape_problems(value: Any, shape: Shape, where: str) -> list[str]:
    if shape.type_name == "structure":
        if not isinstance(value, dict):
            return [f"{where or 'the value'} must be an object for {shape.name}"]
        found = []
        for key, item in value.items():
            if key not in shape.members:
                found.append(f"{where}{key} is not a member of {shape.name}")
            else:
                found += _shape_problems(item, shape.members[key], f"{where}{key}.")
        return found
    if shape.type_name == "list":
        if not isinstance(value, list):
            return [f"{where or 'the value'} must be a list for {shape.name}"]
        return [p for item in value for p in _shape_problems(item, shape.member, where)]
    return []
