"""Every streaming invoker's role may call what its environment names (the walk and its AWS
facts: ``tests/support/walks/invoker_access.py``); each dropped or narrowed permission fails
the walk, naming the resource and the action."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.contract_templates import example_templates
from tests.support.contract_walk import drop_action, narrow_action, of_type
from tests.support.symbolic import Resolver
from tests.support.walks.invoker_access import INVOKE, queued_inputs, walk_invokers


@pytest.mark.parametrize("name", list(example_templates()))
def test_every_invoker_may_call_its_targets_and_read_its_keys(name: str) -> None:
    walk = walk_invokers(name, example_templates()[name])
    assert not walk.problems, "\n".join(walk.problems)


def test_the_walk_finds_every_kind_of_invoker() -> None:
    """Invokers of one endpoint, of a component, of routes, with API keys by name and in a
    secret of the stack's own encrypted with its own key: each is walked somewhere."""
    walked = {n: walk_invokers(n, t).walked for n, t in example_templates().items()}
    assert all(walked[n] for n in ("Llama2Tgi", "Llama3Components", "ModelGateway", "Rag"))
    assert len(walked["FrontDoors"]) == 2
    assert "ApiBatchWorker9B3B0864 (batch worker of ApiFunction6BF808ED)" in walked["OpenaiBatch"]


# -- mutants --------------------------------------------------------------------------------


def _fails(template: dict[str, Any], *fragments: str) -> None:
    walk = walk_invokers("mutant", template)
    assert walk.walked
    assert any(all(f in p for f in fragments) for p in walk.problems), walk.problems


@pytest.mark.parametrize("action", INVOKE)
def test_an_invoker_that_cannot_call_its_endpoint_fails(action: str) -> None:
    _fails(
        drop_action(example_templates()["Phi3Lmi"], action),
        action,
        ":endpoint/${EndpointEEF1FD8F.EndpointName}",
    )


def test_an_invoke_grant_on_another_endpoint_fails() -> None:
    other = {
        "Fn::Sub": "arn:${AWS::Partition}:sagemaker:${AWS::Region}:${AWS::AccountId}:endpoint/other"
    }
    _fails(
        narrow_action(example_templates()["Llama2Tgi"], "sagemaker:InvokeEndpoint", other),
        "sagemaker:InvokeEndpoint",
        ":endpoint/",
    )


def test_an_invoker_that_cannot_call_its_component_fails() -> None:
    template = example_templates()["Llama3Components"]
    endpoint_only = {"Ref": "EndpointEEF1FD8F"}
    _fails(
        narrow_action(template, "sagemaker:InvokeEndpointWithResponseStream", endpoint_only),
        "sagemaker:InvokeEndpointWithResponseStream",
        ":inference-component/llama3components-llama3-227c6825",
    )


def test_a_route_without_its_component_fails() -> None:
    template = example_templates()["ModelGateway"]
    policies = {k for k, r in of_type(template, "AWS::IAM::Policy").items() if "Gateway" in k}
    only = {"Fn::GetAtt": ["Llama4E7FDFEC", "InferenceComponentArn"]}
    _fails(
        narrow_action(
            template,
            "sagemaker:InvokeEndpoint",
            [only, {"Ref": "EndpointEEF1FD8F"}],
            policies=policies,
        ),
        "sagemaker:InvokeEndpoint",
        "modelgateway-qwen",
    )


@pytest.mark.parametrize("action", ["logs:CreateLogStream", "logs:PutLogEvents"])
def test_an_invoker_that_cannot_write_its_logs_fails(action: str) -> None:
    _fails(drop_action(example_templates()["Phi3Lmi"], action), action, "StreamLogs")


def test_an_invoker_that_cannot_read_its_keys_by_name_fails() -> None:
    _fails(
        drop_action(example_templates()["Production"], "secretsmanager:GetSecretValue"),
        "secretsmanager:GetSecretValue",
        ":secret:llm/api-keys-",
    )


def test_an_invoker_that_cannot_read_its_own_secret_fails() -> None:
    _fails(
        drop_action(example_templates()["FrontDoors"], "secretsmanager:GetSecretValue"),
        "secretsmanager:GetSecretValue",
        "ApiKeys3BB3983D",
    )


def test_an_invoker_the_secret_key_does_not_allow_fails() -> None:
    template = example_templates()["FrontDoors"]
    mutant = __import__("copy").deepcopy(template)
    policy = mutant["Resources"]["ApiKeysKey7822CBAC"]["Properties"]["KeyPolicy"]
    policy["Statement"] = [
        s for s in policy["Statement"] if "KeysRoleED05AE33" not in str(s.get("Principal"))
    ]
    # the account's own statements remain, but they allow only through IAM policies, and the
    # role's policies grant no kms:Decrypt
    _fails(mutant, "kms:Decrypt", "ApiKeysKey7822CBAC")


def test_a_batch_worker_that_cannot_call_the_invoker_s_target_fails() -> None:
    template = example_templates()["OpenaiBatch"]
    worker = {"ApiBatchWorkerRoleDefaultPolicy58CC4D6B"}
    _fails(
        drop_action(template, "sagemaker:InvokeEndpointWithResponseStream", policies=worker),
        "ApiBatchWorker9B3B0864",
        "sagemaker:InvokeEndpointWithResponseStream",
        ":inference-component/openaibatch-qwen-27078adb",
    )


def _worker_env(mutant: dict[str, Any]) -> dict[str, Any]:
    variables: dict[str, Any] = mutant["Resources"]["ApiBatchWorker9B3B0864"]["Properties"][
        "Environment"
    ]["Variables"]
    return variables


def test_a_batch_worker_calling_other_targets_than_its_invoker_fails() -> None:
    mutant = copy.deepcopy(example_templates()["OpenaiBatch"])
    routes = _worker_env(mutant)["ROUTES"]["Fn::Join"][1]
    routes[2] = routes[2].replace("OpenaiBatch-Qwen-27078ADB", "OpenaiBatch-Other")
    _fails(mutant, "batch worker ApiBatchWorker9B3B0864", "OpenaiBatch-Other")


# -- the batch worker's asynchronous endpoint (tests/support/walks/batch_async.py) ----------

_WORKER_POLICIES = {
    "ApiBatchWorkerRoleDefaultPolicy58CC4D6B",
    "OvernightAsyncFoldersOpenaiBatchApiBatchWorkerRoleEA6E33A24C295A06",
}
_OVERNIGHT = ":endpoint/openaibatch-overnight-8066173c-g5-2xlarge-async"


def test_the_walk_queues_the_worker_s_asynchronous_lines() -> None:
    walk = walk_invokers("OpenaiBatch", example_templates()["OpenaiBatch"])
    assert not walk.problems
    template = example_templates()["OpenaiBatch"]
    assert queued_inputs(Resolver(template), _worker_env(copy.deepcopy(template)))


@pytest.mark.parametrize(
    ("action", "where"),
    [
        ("sagemaker:InvokeEndpointAsync", _OVERNIGHT),
        ("s3:PutObject", "/inputs/batch_0123/line.json"),
        ("s3:GetObject", "/outputs/request-id.out"),
        ("s3:ListBucket", "Answers9615456C"),
    ],
)
def test_a_batch_worker_that_cannot_queue_or_read_an_answer_fails(action: str, where: str) -> None:
    template = example_templates()["OpenaiBatch"]
    mutant = drop_action(template, action, policies=_WORKER_POLICIES)
    _fails(mutant, "batch worker ApiBatchWorker9B3B0864", action, where)


def test_a_batch_worker_that_calls_the_asynchronous_endpoint_in_real_time_fails() -> None:
    mutant = copy.deepcopy(example_templates()["OpenaiBatch"])
    policy = mutant["Resources"]["ApiBatchWorkerRoleDefaultPolicy58CC4D6B"]["Properties"]
    policy["PolicyDocument"]["Statement"].append(
        {
            "Action": "sagemaker:InvokeEndpoint",
            "Effect": "Allow",
            "Resource": {"Ref": "Overnight78902071"},
        }
    )
    _fails(mutant, "may sagemaker:InvokeEndpoint on the asynchronous", "Overnight")


def test_a_model_that_cannot_read_the_worker_s_bodies_fails() -> None:
    template = example_templates()["OpenaiBatch"]
    mutant = drop_action(template, "s3:GetObject", policies={"ModelRoleAsyncFolders9F53A730"})
    _fails(mutant, "execution role ModelRole3E65CE92", "s3:GetObject", "/inputs/batch_0123/")


def test_a_batch_worker_without_the_invoker_s_asynchronous_models_fails() -> None:
    mutant = copy.deepcopy(example_templates()["OpenaiBatch"])
    del _worker_env(mutant)["BATCH_ASYNC"]
    _fails(mutant, "batch worker ApiBatchWorker9B3B0864", "queues on []", "qwen-overnight")
