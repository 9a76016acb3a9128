#!/usr/bin/env python3
"""Synthesizes the example stacks (all by default; ``-c constructs-llm:stacks=a,b`` picks some).

Stacks are environment-agnostic, so no AWS account or credentials are needed. cdk-nag's
AwsSolutions pack runs as a validation plugin: any unacknowledged finding fails the synth.
The library itself prints each endpoint's notes (memory plan, Service Quotas) as one line.
"""

from __future__ import annotations

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks

from stacks import EXAMPLES, stack_id
from stacks.selection import select_examples


def build_app(app: App) -> App:
    for name in select_examples(app.node.try_get_context("constructs-llm:stacks"), EXAMPLES):
        EXAMPLES[name](app, stack_id(name))
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


if __name__ == "__main__":
    build_app(App()).synth()
