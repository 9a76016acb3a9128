"""An instance-type change on an autoscaled endpoint, as a new app makes it: the real CDK CLI
synthesizes an app with the project's ``cdk.json`` (``constructs-llm:newEndpointOnFleetChange``
on) on ml.g6.2xlarge, and ``cdk diff`` compares it offline with the same app's template on
ml.g5.2xlarge, as it would compare it with the deployed stack. That first template is the same
app.py synthesized in-process with the same context (one CLI synth fewer): its cloud assembly
holds what the CLI would print.

What it shows: both synths are silent about fleets; every logical id stays; the Endpoint,
its config, its scalable target and its policy are replaced (the Endpoint's name follows the
fleet); and the template's dependencies create the new config, then the new endpoint, then
the target registering its variant, then the policy. What only a real deploy shows is listed in
docs/endpoints-and-components.md ("A new instance type on an autoscaled endpoint")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from tests.conftest import REPORT_ANNOTATIONS, ROOT
from tests.support.template_graph import CONFIG, ENDPOINT, POLICY, TARGET, Graph

CDK = ROOT / "node_modules" / ".bin" / "cdk"
pytestmark = pytest.mark.slow(seconds=20)

APP = """\
from aws_cdk import App, CfnOutput, Stack

from constructs_llm import (Autoscaling, Engine, LlmEndpoint, LlmModel, ModelSource,
                            StreamingInvoker)


def chat(app: App) -> App:
    stack = Stack(app, "Chat")
    model = LlmModel(stack, "Model", source=ModelSource.hugging_face("Qwen/Qwen2.5-7B-Instruct"),
                     engine=Engine.vllm(), instance_type=app.node.get_context("instance-type"),
                     max_total_tokens=8192)
    endpoint = LlmEndpoint(stack, "Endpoint", model=model,
                           autoscaling=Autoscaling(min_capacity=1, max_capacity=4,
                                                   target_concurrent_requests=8))
    StreamingInvoker(stack, "Api", target=endpoint)
    CfnOutput(stack, "EndpointName", value=endpoint.endpoint_name)
    return app


if __name__ == "__main__":
    chat(App()).synth()
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    for key in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        env.pop(key, None)
    return env


def _cdk(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        [str(CDK), *args, "--no-notices"],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    return output


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app in a directory of its own, with the project's cdk.json context."""
    root = tmp_path_factory.mktemp("fleet-change")
    (root / "app.py").write_text(APP)
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    context.pop("constructs-llm:stacks")
    (root / "cdk.json").write_text(json.dumps({"app": "python3 app.py", "context": context}))
    return root


#: What the CLI adds to cdk.json's context when it runs an app (path and asset metadata, and the
#: version reporting that adds the CDKMetadata resource).
CLI_CONTEXT = {
    "aws:cdk:enable-path-metadata": True,
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:version-reporting": True,
}


def _synth_in_process(app: Path, instance_type: str) -> tuple[str, Path]:
    """app.py's ``chat`` in this process, with the CLI's context: what the CLI would print
    about the stack (its warnings, from the cloud assembly) and the cloud assembly."""
    from aws_cdk import App

    namespace: dict[str, Any] = {"__name__": "fleet_change_app"}
    exec(compile((app / "app.py").read_text(), str(app / "app.py"), "exec"), namespace)
    context = json.loads((app / "cdk.json").read_text())["context"]
    # in-process, warnings stay in the cloud assembly rather than a report printed by jsii
    context.pop(REPORT_ANNOTATIONS)
    out = app / f"cdk.out.{instance_type}"
    context = {**context, **CLI_CONTEXT, "instance-type": instance_type}
    assembly = namespace["chat"](App(outdir=str(out), context=context)).synth()
    messages = assembly.get_stack_by_name("Chat").messages
    return "\n".join(f"{m.level}: {m.entry.data}" for m in messages), out


@pytest.fixture(scope="module")
def synths(app: Path) -> dict[str, tuple[str, Path]]:
    """Each instance type's output and cloud assembly: ``cdk synth`` on ml.g6.2xlarge, and the
    template it is compared with, on ml.g5.2xlarge, in-process."""
    new = "ml.g6.2xlarge"
    printed = _cdk(
        app, "synth", "-c", f"instance-type={new}", "--output", str(app / f"cdk.out.{new}")
    )
    return {
        "ml.g5.2xlarge": _synth_in_process(app, "ml.g5.2xlarge"),
        new: (printed, app / f"cdk.out.{new}"),
    }


def _template(synths: dict[str, tuple[str, Path]], name: str) -> Graph:
    data = json.loads((synths[name][1] / "Chat.template.json").read_text())
    return Graph(Template.from_json(data))


def test_the_flag_is_what_cdk_json_gives_new_apps() -> None:
    for path in (ROOT / "cdk.json", ROOT / "examples" / "chat" / "cdk.json"):
        assert json.loads(path.read_text())["context"]["constructs-llm:newEndpointOnFleetChange"]


def test_a_new_endpoint_synthesizes_without_a_fleet_warning(
    synths: dict[str, tuple[str, Path]],
) -> None:
    for printed, _ in synths.values():
        assert "autoscaled-fleet" not in printed
        assert "pools-autoscaling" not in printed


def test_the_diff_replaces_the_endpoint_under_the_same_logical_ids(
    app: Path, synths: dict[str, tuple[str, Path]]
) -> None:
    before, after = _template(synths, "ml.g5.2xlarge"), _template(synths, "ml.g6.2xlarge")
    assert set(before.resources) == set(after.resources)
    endpoint = after.one(ENDPOINT)
    names = [g.props(endpoint)["EndpointName"] for g in (before, after)]
    assert names == ["Chat-Endpoint-A3409770-g5-2xlarge", "Chat-Endpoint-A3409770-g6-2xlarge"]
    base = synths["ml.g5.2xlarge"][1] / "Chat.template.json"
    diff = _cdk(app, "diff", "--app", str(synths["ml.g6.2xlarge"][1]), "--template", str(base))
    replaced = dict(re.findall(r"^\[~\] (AWS::\S+) \S+ (\w+) replace$", diff, re.MULTILINE))
    assert replaced == {
        CONFIG: after.one(CONFIG),
        ENDPOINT: endpoint,
        TARGET: after.one(TARGET),
        POLICY: after.one(POLICY),
    }, diff
    assert "(requires replacement)" in diff


def test_the_dependencies_create_the_endpoint_before_its_scalable_target(
    synths: dict[str, tuple[str, Path]],
) -> None:
    graph = _template(synths, "ml.g6.2xlarge")
    config, endpoint, target, policy = (graph.one(k) for k in (CONFIG, ENDPOINT, TARGET, POLICY))
    # creation: config, endpoint, target (its ResourceId names the endpoint), policy; the
    # cleanup deletes the old ones in the reverse order, the target before its endpoint
    assert graph.waits_for(endpoint, config)
    assert graph.waits_for(target, endpoint)
    assert graph.waits_for(policy, target)
    assert not graph.waits_for(endpoint, target)
    # the invoker's function and its policy name the endpoint, so they follow the new one
    invoker = [k for k in graph.of("AWS::Lambda::Function") if k.startswith("Api")]
    assert invoker and all(graph.waits_for(k, endpoint) for k in invoker)
