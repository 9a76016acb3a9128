"""Checks of plain values, shared by every construct: the kind of a prop (a class, several, or
a jsii interface such as ``iam.IRole``), integers, numbers, booleans, strings, lists, envs,
durations, and how a value is shown in a message. Each check returns a ``Problem`` naming the
prop (or None) so callers can gather all problems of one construct into a single error
(``Problems``)."""

from __future__ import annotations

import functools
import inspect
import re
import weakref
from collections.abc import Mapping, Sequence
from typing import Literal, TypeGuard

from aws_cdk import Duration, Token
from constructs import Construct
from jsii._reference_map import InterfaceDynamicProxy

from constructs_llm.problems import Problem

#: What every encoded token of aws-cdk-lib contains when it is a string (its
#: ``ANY_TOKEN_MARKER``, in ``core/lib/private/encoding.ts``: ``${Token[...]}``, the list form
#: ``#{Token[...]}``); a string without it is resolved.
_TOKEN_MARKER = "Token["
#: What ``Token.isUnresolved`` looks for in a string that holds the marker (``unresolved`` in
#: aws-cdk-lib 2.275's ``core/lib/private/encoding.ts``: its ``STRING_TOKEN_REGEX``, a string
#: token ``${Token[<VALID_KEY_CHARS>]}`` or a stringified number token), so a string is
#: answered here.
_STRING_TOKEN = re.compile(r"\$\{Token\[[a-zA-Z0-9:._-]+\]\}|-1\.[0-9]{10,16}e\+289")
#: The same tokens, kept by ``re.split``: literal, token, literal, ...
_STRING_TOKEN_PARTS = re.compile(f"({_STRING_TOKEN.pattern})")
#: A number token is a double near -1.9e289 (``createTokenDouble``): never a Python int this small.
_PLAIN_INT = 2**53


def is_unresolved(value: object) -> bool:
    """``Token.is_unresolved(value)``, answered here for a plain int or a string (each jsii call
    is a round trip to the Node.js process; checks run on every prop of every construct), and
    asked of aws-cdk-lib otherwise."""
    if value is None or isinstance(value, bool):
        return False
    if type(value) is int and -_PLAIN_INT < value < _PLAIN_INT:
        return False
    if type(value) is str:
        return _TOKEN_MARKER in value and _STRING_TOKEN.search(value) is not None
    return bool(Token.is_unresolved(value))


def token_parts(value: str) -> list[str]:
    """``value`` cut at each encoded token (aws-cdk-lib's ``STRING_TOKEN_REGEX``, as
    :func:`is_unresolved` reads it): literal, token, literal, ..., the literals possibly empty."""
    return _STRING_TOKEN_PARTS.split(value)


# The seconds of each Duration object read (a Duration never changes, and the default timeouts
# are objects shared by every host, ``sizing/timeouts.py``): asked of aws-cdk-lib once each.
_seconds: weakref.WeakKeyDictionary[Duration, float] = weakref.WeakKeyDictionary()


def seconds_of(duration: Duration) -> float:
    """``duration.to_seconds()``, asked of aws-cdk-lib once per Duration object."""
    seconds = _seconds.get(duration)
    if seconds is None:
        seconds = _seconds[duration] = duration.to_seconds()
    return seconds


def duration_type_problem(prop: str, value: object) -> Problem | None:
    """A ``Duration`` (or None). A bare number is refused rather than read as seconds: users
    write ``health_check_timeout=15`` meaning minutes as often as seconds, and a wrong guess
    deploys a timeout 60 times off; the message names ``Duration.minutes(...)``."""
    if value is None or isinstance(value, Duration):
        return None
    return Problem.of(
        prop, value, f"{prop} must be a Duration, got {value!r};", "use Duration.minutes(...)"
    )


def duration_problem(
    prop: str, value: object, *, minimum_s: int, maximum_s: int, bounds: str, why: str
) -> Problem | None:
    """A Duration of whole seconds within [minimum_s, maximum_s] (tokens pass)."""
    wrong_type = duration_type_problem(prop, value)
    if wrong_type or not isinstance(value, Duration):
        return wrong_type
    seconds = value.to_seconds(integral=False)
    if is_unresolved(seconds):
        return None
    if not minimum_s <= seconds <= maximum_s:
        return Problem.of(prop, value, f"{prop} must be between {bounds}, got {seconds:g} s;", why)
    if seconds != int(seconds):
        return Problem.of(
            prop, value, f"{prop} must be a whole number of seconds, got {seconds:g} s"
        )
    return None


def positive_int_problem(prop: str, value: object, *, minimum: int = 1) -> Problem | None:
    if value is None or is_unresolved(value):
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        return Problem.of(prop, value, f"{prop} must be an integer >= {minimum}, got {value!r}")
    return None


def memory_mib_problem(prop: str, value: object, *, minimum: int) -> Problem | None:
    """A size in MiB: an integer >= ``minimum``. A small one is most likely GiB written where
    MiB goes, so the message names the MiB it would be (16 -> 16,384)."""
    found = positive_int_problem(prop, value, minimum=minimum)
    if found is None or not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return found
    if value * 1024 < minimum:
        return found
    mib = f"{prop}={value} * 1024 ({value * 1024:,})"
    return Problem.of(
        prop, value, f"{found.wrong};", f"{prop} is in MiB: for {value} GiB pass {mib}"
    )


def int_type_problem(prop: str, value: object, *, minimum: int = 1) -> Problem | None:
    """Only a value that is not an integer at all (the range is checked where it is known),
    with the message the range check gives."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return None
    return positive_int_problem(prop, value, minimum=minimum)


def unit_hint(value: object, *, unit: Literal["share", "percent"]) -> str:
    """``"; ..."`` naming the unit when a number out of range reads as the other one: a share
    (0-1) given as a percent (``5`` for 5 %), or a percent (0-100) given as a share (``0.9``
    for 90 %); empty otherwise."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return ""
    if unit == "share" and 1 < value <= 100:
        return (
            f"; {value:g} reads as {value * 100:,.0f} % (a share runs from 0 to 1): for "
            f"{value:g} % pass {value / 100:g}"
        )
    if unit == "percent" and 0 < value <= 1:
        return (
            f"; {value:g} reads as {value:g} % (a percent runs from 0 to 100): for "
            f"{value * 100:g} % pass {value * 100:g}"
        )
    return ""


def bool_problem(prop: str, value: object, *, optional: bool = True) -> Problem | None:
    """True or False (or None, the default, when ``optional``)."""
    if isinstance(value, bool) or (optional and value is None):
        return None
    allowed = "True, False or None" if optional else "True or False"
    wrong = f"{prop} must be {allowed}, got {value!r}"
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        fix = f"pass the bool {value.strip().capitalize()}, not a string"
        return Problem.of(prop, value, f"{wrong};", fix)
    return Problem.of(prop, value, wrong)


def str_problem(prop: str, value: object, *, example: str, optional: bool = True) -> Problem | None:
    """A string (tokens pass), such as ``example``."""
    if isinstance(value, str) or (optional and value is None):
        return None
    return Problem.of(
        prop, value, f"{prop} must be a string such as {example!r}, got {describe(value)}"
    )


def env_problem(prop: str, value: object) -> Problem | None:
    """Container environment: a mapping of names to values (each value's type is checked with
    the names it goes with)."""
    if value is None or isinstance(value, Mapping):
        return None
    return Problem.of(
        prop,
        value,
        f"{prop} must be a dict of names to string values, got {describe(value)};",
        f"e.g. {prop}={{'MAX_BATCH_SIZE': '8'}}",
    )


def type_problem(
    prop: str,
    value: object,
    expected: type | tuple[type, ...],
    fix: str,
    *,
    optional: bool = False,
) -> Problem | None:
    """A prop of the wrong kind (a model id string where a ModelSource goes, a role ARN where
    an ``iam.IRole`` goes, ...). ``expected`` may be a class, several, or a jsii interface
    (``iam.IRole``), which a value satisfies by having its members."""
    if optional and value is None:
        return None
    kinds = expected if isinstance(expected, tuple) else (expected,)
    if any(is_a(value, kind) for kind in kinds):
        return None
    wanted = " or ".join(_with_article(_kind_name(kind)) for kind in kinds)
    return Problem.of(prop, value, f"{prop} must be {wanted}, got {describe(value)};", fix)


def is_list(value: object) -> TypeGuard[Sequence[object]]:
    """A list or tuple: a sequence, but not a string."""
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def not_a_list(prop: str, value: object, items: str, fix: str = "") -> Problem:
    """The problem of a ``prop`` that is not a list (``is_list``) of ``items``."""
    wrong = f"{prop} must be a list of {items}, got {describe(value)}"
    return Problem.of(prop, value, f"{wrong};" if fix else wrong, fix)


def list_problems(
    prop: str, value: object, expected: type | tuple[type, ...], fix: str
) -> list[Problem | None]:
    """A list (or tuple) of ``expected``: the container, then each item (``prop[i]``)."""
    if value is None:
        return []
    if not is_list(value):
        kinds = expected if isinstance(expected, tuple) else (expected,)
        names = " or ".join(_kind_name(k) for k in kinds)
        return [not_a_list(prop, value, names, fix)]
    return [type_problem(f"{prop}[{i}]", item, expected, fix) for i, item in enumerate(value)]


def _kind_name(kind: type) -> str:
    """``LlmModel``, ``Duration``, or ``iam.IRole`` for the CDK's service modules."""
    module = kind.__module__
    if module.startswith("aws_cdk.aws_"):
        return f"{module.removeprefix('aws_cdk.aws_')}.{kind.__name__}"
    return kind.__name__


def _with_article(name: str) -> str:
    vowel = name[0].lower() in "aeiou" or name.startswith(("Llm", "s3.", "sns."))
    return f"{'an' if vowel else 'a'} {name}"  # "an LlmModel", "an iam.IRole", "a Duration"


def is_a(value: object, kind: type) -> bool:
    """Whether ``value`` is a ``kind``: an instance of the class, or, for a jsii interface
    such as ``sns.ITopic`` (which ``isinstance`` cannot check), a value with its members."""
    if not getattr(kind, "_is_protocol", False):
        return isinstance(value, kind)
    # A jsii interface cannot be checked with isinstance: a value satisfies it by its members,
    # looked up on its class, or on the classes of the interfaces jsii made it a proxy of (an
    # object of a class jsii does not know, such as an imported secret), so no property is
    # read (each read is a round trip to the Node.js process); then on the value.
    classes = [type(value)]
    if isinstance(value, InterfaceDynamicProxy):  # its interfaces' proxies (none if renamed)
        classes += [type(delegate) for delegate in getattr(value, "_delegates", ())]
    missing = [m for m in _members(kind) if not any(hasattr(c, m) for c in classes)]
    return all(hasattr(value, m) for m in missing)


@functools.cache
def _members(interface: type) -> frozenset[str]:
    names: set[str] = set()
    for base in interface.__mro__:
        if getattr(base, "_is_protocol", False) and base.__module__.startswith(
            ("aws_cdk", "constructs")
        ):
            names.update(n for n in vars(base) if not n.startswith("_"))
    return frozenset(names)


def describe(value: object) -> str:
    """A value for messages: constructs by type and path, classes by name, anything else by
    type and repr."""
    if isinstance(value, Construct):
        return f"{type(value).__name__} '{value.node.path}'"
    if isinstance(value, type):
        # An engine's class is its factory: Engine.vllm is VllmEngine.
        factory = getattr(value, "factory_name", None)
        if isinstance(factory, str):
            return f"the factory Engine.{factory} itself, not called: call it, Engine.{factory}()"
        return f"the class {value.__name__} (not an instance)"
    if inspect.isfunction(value) or inspect.ismethod(value):
        name = getattr(value, "__qualname__", getattr(value, "__name__", "a function"))
        return f"the factory {name} itself, not called: call it, {name}()"
    return f"{type(value).__name__} {value!r}"


def all_ints(*values: object) -> bool:
    """True when every value is a plain int (not a bool): safe to compare."""
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)
