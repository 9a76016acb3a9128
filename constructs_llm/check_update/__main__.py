"""``python -m constructs_llm.check_update OLD.template.json NEW.template.json`` (or
``--stack NAME NEW.template.json``): prints what CloudFormation and SageMaker will do with each
endpoint and component, and exits 0 when every change deploys, 1 when one would be refused, 2
on bad input (a message naming the file or stack, no traceback)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from constructs_llm.check_update import (
    Template,
    TemplateError,
    check_update,
    parse_template,
    read_template,
)

#: Exit codes.
DEPLOYS, REFUSED, BAD_INPUT = 0, 1, 2


def deployed_template(stack: str) -> Template:
    """The template the stack ``stack`` was last deployed with (CloudFormation GetTemplate,
    ``TemplateStage=Original``), read with the caller's credentials and region, or a
    :class:`TemplateError` naming the stack."""
    import boto3  # only for --stack
    from botocore.exceptions import BotoCoreError, ClientError

    source = f"stack {stack}"
    try:
        body = boto3.client("cloudformation").get_template(
            StackName=stack, TemplateStage="Original"
        )["TemplateBody"]
    except (BotoCoreError, ClientError) as error:
        raise TemplateError(source, f"cannot read its deployed template ({error})") from None
    return parse_template(body, source)


def parser() -> argparse.ArgumentParser:
    """The command line: ``OLD.template.json NEW.template.json``, or ``--stack NAME
    NEW.template.json``."""
    built = argparse.ArgumentParser(
        prog="python -m constructs_llm.check_update",
        description=(
            "What CloudFormation and SageMaker will do when a stack goes from OLD to NEW: "
            "endpoint by endpoint and component by component. Exit 0 when every change "
            "deploys, 1 when one would be refused, 2 on bad input."
        ),
    )
    built.add_argument(
        "templates", nargs="+", metavar="TEMPLATE", help="OLD and NEW, or NEW with --stack"
    )
    built.add_argument("--stack", metavar="NAME", help="read OLD from this deployed stack")
    return built


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """``argv`` parsed; a usage error (exit 2) when the files do not fit ``--stack``."""
    command = parser()
    args = command.parse_args(argv)
    wanted = 1 if args.stack else 2
    if len(args.templates) != wanted:
        shape = "NEW.template.json" if args.stack else "OLD.template.json NEW.template.json"
        command.error(f"expected {shape}, got {len(args.templates)} file(s)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(argv)
    try:
        old = deployed_template(args.stack) if args.stack else read_template(args.templates[0])
        new = read_template(args.templates[-1])
    except TemplateError as error:
        print(f"check_update: {error}", file=sys.stderr)
        return BAD_INPUT
    found = check_update(old, new)
    for finding in found:
        print("\n".join(finding.lines()))
    refused = [f for f in found if f.refused]
    changed = [f for f in found if f.verdict.value != "unchanged"]
    if refused:
        print(f"{len(refused)} change(s) would be refused: this deploy would fail and roll back")
        return REFUSED
    print(f"every change deploys ({len(changed)} of {len(found)} changed)")
    return DEPLOYS


if __name__ == "__main__":
    sys.exit(main())
