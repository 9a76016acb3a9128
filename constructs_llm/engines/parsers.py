"""Output parsers picked per model family: what tool calling and reasoning share.

vLLM and SGLang turn a model's raw text into OpenAI fields only with a parser that knows the
model's format: a tool-call parser (``--tool-call-parser``) for ``tool_calls``, a reasoning
parser (``--reasoning-parser``) for the thinking a reasoning model writes before its answer.
Each kind has a packaged table (``data/tool_parsers.json``, ``data/reasoning_parsers.json``)
that lists the names each engine registers and the parser that fits each model family of
``data/models.json``, each row citing the engine's source.

An engine takes two settings per kind: a switch (``tool_calls``, ``reasoning``) and a parser
name (``tool_call_parser``, ``reasoning_parser``). The switch: None (the default) uses the
family's parser where the table knows one and none elsewhere; True asks for a parser (the
synth fails where none is known or given); False sets none. A given name must be one the
engine registers, and turns the kind on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from constructs_llm import catalogs
from constructs_llm.catalogs import ParserCatalog
from constructs_llm.problems import Problem

#: The engines whose parser names the tables list (LMI's vLLM backend uses vLLM's).
ParserEngine = Literal["vllm", "sglang"]


@dataclass(frozen=True)
class ParserChoice:
    """The parser an engine runs for one model, or why it runs none.

    :param parser: the parser's name. @default None (none)
    :param reason: why none runs, naming the fix. @default ""
    """

    parser: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class _ParserTable:
    """One kind of parser: its table and the engine settings that pick from it.

    :param catalog: the packaged table.
    :param switch: the engine setting that turns the kind on or off (``tool_calls``).
    :param setting: the engine setting that names a parser (``tool_call_parser``).
    :param what: the kind in messages (``tool-call parser``).
    :param feature: what the switch turns off, in messages (``tool calling``).
    """

    catalog: Callable[[], ParserCatalog]
    switch: str
    setting: str
    what: str
    feature: str

    def known(self, engine: ParserEngine) -> tuple[str, ...]:
        """The parser names ``engine`` registers."""
        return self.catalog().engines[engine].parsers

    def family_parser(self, engine: ParserEngine, family: str | None) -> str | None:
        """The parser the table gives ``family`` on ``engine``; None where none fits."""
        parsers = self.catalog().families.get(family) if family else None
        if parsers is None:
            return None
        found: str | None = getattr(parsers, engine)
        return found

    def name_problem(self, engine: ParserEngine, parser: str | None) -> Problem | None:
        """A problem when ``parser`` is not a name ``engine`` registers."""
        if parser is None:
            return None
        names = self.known(engine)
        if parser in names:
            return None
        return Problem.of(
            self.setting,
            parser,
            f"{self.setting} must be a parser the engine registers, got {parser!r}; known: "
            f"{', '.join(sorted(names))}",
        )

    def setting_problems(
        self, engine: ParserEngine, switch: bool | None, parser: str | None
    ) -> list[Problem]:
        """The parser must be a registered name, and not given with the switch off."""
        problems = [self.name_problem(engine, parser)]
        if parser is not None and switch is False:
            problems.append(
                Problem.of(
                    self.setting,
                    parser,
                    f"{self.setting}={parser!r} was given with {self.switch}=False;",
                    f"drop one of them ({self.switch}=None or True turns the parser on)",
                )
            )
        return [p for p in problems if p]

    def choose(
        self,
        engine: ParserEngine,
        *,
        factory: str,
        switch: bool | None,
        parser: str | None,
        family: str | None,
    ) -> ParserChoice:
        """The given parser, else the family's; none when switched off or none is known."""
        if switch is False:
            return ParserChoice(reason=self.turned_off(factory))
        chosen = parser or self.family_parser(engine, family)
        if chosen is None:
            return ParserChoice(reason=self._none_known(family))
        return ParserChoice(parser=chosen)

    def unserved_problem(
        self, factory: str, switch: bool | None, choice: ParserChoice
    ) -> Problem | None:
        """A problem when the switch asks for a parser (True) and none runs."""
        if switch is not True or choice.parser is not None:
            return None
        return Problem.of(
            self.switch,
            True,
            f"Engine.{factory}({self.switch}=True) cannot be served: {choice.reason}",
        )

    def family_problem(
        self, engine: ParserEngine, parser: str | None, family: str | None
    ) -> Problem | None:
        """A problem when ``parser`` was given for a family the table knows and is not the
        family's: the engine would start, but parse nothing the model writes (its output format
        is another parser's), so the field would stay empty without an error."""
        rows = self.catalog().families
        if parser is None or family is None or family not in rows:
            return None
        fit = self.family_parser(engine, family)
        if fit == parser:
            return None
        if fit is None:
            return Problem.of(
                self.setting,
                parser,
                f"{self.setting}={parser!r} does not fit the model family {family!r}, which has "
                f"no {self.what} format (the packaged table, from the engine's source);",
                f"drop {self.setting}",
            )
        return Problem.of(
            self.setting,
            parser,
            f"{self.setting}={parser!r} does not fit the model family {family!r}, whose output "
            f"the {fit!r} parser reads (the packaged table, from the engine's source);",
            f"use {self.setting}={fit!r}, or drop it and the family's parser is chosen",
        )

    def turned_off(self, factory: str) -> str:
        return f"Engine.{factory}({self.switch}=False) turns {self.feature} off"

    def _none_known(self, family: str | None) -> str:
        which = (
            f"the model family {family!r}" if family else "this model (not in the packaged table)"
        )
        return (
            f"no {self.what} is known for {which}; pass {self.setting}=... naming the parser "
            f"that fits the model's chat template, or drop {self.switch}=True"
        )


TOOL_PARSERS = _ParserTable(
    catalogs.tool_parsers, "tool_calls", "tool_call_parser", "tool-call parser", "tool calling"
)
REASONING_PARSERS = _ParserTable(
    catalogs.reasoning_parsers,
    "reasoning",
    "reasoning_parser",
    "reasoning parser",
    "reasoning parsing",
)


def parser_family_problems(
    engine: ParserEngine, tool_parser: str | None, reasoning_parser: str | None, family: str | None
) -> list[Problem]:
    """Parsers given for a model family whose output another parser reads, or none does."""
    found = (
        TOOL_PARSERS.family_problem(engine, tool_parser, family),
        REASONING_PARSERS.family_problem(engine, reasoning_parser, family),
    )
    return [p for p in found if p]
