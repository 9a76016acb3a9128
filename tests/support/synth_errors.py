"""Synthesizing an app whose library check fails at synth.

A check that spans constructs (the components of one endpoint) runs in the library's synth
hook, an aspect that jsii calls back into Python: an error raised there reaches the caller of
``app.synth()`` as a ``RuntimeError`` with the library's message, raised while jsii handled the
library's error, which is its ``__context__``. :func:`synthesize` raises that error itself, so
a test asserts on the library's type as well as its message.
"""

from __future__ import annotations

from aws_cdk import Stage, cx_api
from constructs import IConstruct

from constructs_llm.errors import ConstructsLlmError


def synthesize(scope: IConstruct) -> cx_api.CloudAssembly:
    """Synthesizes ``scope``'s stage (or app); a library check that fails at synth raises its
    own error (type and message)."""
    stage = scope if Stage.is_stage(scope) else Stage.of(scope)
    assert isinstance(stage, Stage), f"{scope.node.path} is in no app"
    try:
        return stage.synth()
    except RuntimeError as error:
        found = error.__context__
        if isinstance(found, ConstructsLlmError) and str(found) == str(error):
            raise found from None
        raise
