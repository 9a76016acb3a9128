"""The execution role of every SageMaker Model of every template may do what the model's
start-up and serving need, as the template itself names it:

- pull its image: ``ecr:BatchGetImage`` and ``ecr:GetDownloadUrlForLayer`` on the repository
  the image URI names (mappings included), ``ecr:GetAuthorizationToken`` on ``*`` ("How to
  use SageMaker AI execution roles", CreateModel API: Execution Role Permissions,
  https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-roles.html);
- read its weights: ``s3:GetObject`` on the object (``ModelDataUrl``, an ``S3Object``) or on
  an object under the prefix, and ``s3:ListBucket`` on the bucket with that ``s3:prefix``
  (an ``S3Prefix`` source is listed, then read);
- use every KMS key involved: ``kms:Decrypt`` on the key of a weights bucket (Amazon S3 User
  Guide, "Using server-side encryption with AWS KMS keys": GetObject on such an object
  needs it), and ``kms:CreateGrant``, ``kms:DescribeKey``, ``kms:Decrypt`` and
  ``kms:GenerateDataKeyWithoutPlaintext`` on the volume key of an endpoint config hosting it
  (what Amazon EBS calls to encrypt a volume, "How Amazon EBS uses AWS KMS"), through the key
  policy and the role's policies together;
- write its logs: ``logs:CreateLogStream`` and ``logs:PutLogEvents`` on a stream of
  ``/aws/sagemaker/Endpoints/<the endpoint's name>`` for every endpoint hosting it
  ("Log groups and streams that Amazon SageMaker AI sends to Amazon CloudWatch Logs"; a stream
  ARN is ``log-group:<name>:log-stream:<stream>``, "CloudWatch Logs resources and operations");
- put its metrics: ``cloudwatch:PutMetricData`` in ``/aws/sagemaker/Endpoints``, the
  namespace SageMaker publishes endpoint instance metrics in ("Amazon SageMaker AI metrics in
  Amazon CloudWatch");
- write an asynchronous endpoint's results and failures and publish its notifications
  (``_async_output``), and read the adapter artifacts of its components (``_adapters_on``;
  the endpoint config's own role too, ``_adapter_readers``);
- and no bucket or topic policy of the template denies any of it (calls made over TLS).

What only a deploy proves: that the image and weights exist, and that SCPs, permission
boundaries and bucket policies outside the template allow the same.
"""

from __future__ import annotations

from typing import Any

from tests.support.contract_walk import (
    Walk,
    ecr_repository_arn,
    guards_of,
    of_type,
    s3_location,
)
from tests.support.iam_policy import Request, identity_policy, key_allows
from tests.support.symbolic import PARTITION, Resolver, Text, arn, references, render, text

__all__ = [
    "AN_OBJECT",
    "A_STREAM",
    "NAMESPACE",
    "VOLUME_KEY_ACTIONS",
    "bucket_key",
    "guards_for",
    "template_bucket",
    "use_key",
    "walk_models",
]

NAMESPACE = "/aws/sagemaker/Endpoints"
VOLUME_KEY_ACTIONS = (
    "kms:CreateGrant",
    "kms:DescribeKey",
    "kms:Decrypt",
    "kms:GenerateDataKeyWithoutPlaintext",
)
#: an object under a prefix the weights are read from, as SageMaker downloads them
AN_OBJECT = "config.json"
#: a stream of an endpoint's log group (one per variant and instance)
A_STREAM = "AllTraffic/i-0123456789abcdef0"


def walk_models(name: str, template: dict[str, Any]) -> Walk:
    walk = Walk(name)
    resolve = Resolver(template)
    models = of_type(template, "AWS::SageMaker::Model")
    for model_id, model in models.items():
        props = model["Properties"]
        role_ref = props["ExecutionRoleArn"]
        role = role_ref["Fn::GetAtt"][0] if "Fn::GetAtt" in role_ref else None
        if role is None:
            walk.problems.append(f"{name}: {model_id}'s execution role is not in the template")
            continue
        policy = identity_policy(resolve, role)
        who = f"{model_id}'s execution role {role}"
        for container in [props.get("PrimaryContainer"), *props.get("Containers", [])]:
            if container is None:
                continue
            _image(walk, who, policy, resolve(container["Image"]))
            for uri, kind in _weights(container, resolve):
                _read_weights(walk, who, resolve, role, uri, kind)
        endpoints = _endpoints_hosting(template, model_id)
        if not endpoints:
            walk.problems.append(f"{name}: no endpoint hosts {model_id}: nothing to walk")
        for endpoint_id, config_id in endpoints:
            _volume_key(walk, who, resolve, role, config_id)
            _async_output(walk, who, resolve, role, config_id)
            endpoint_name = resolve.name(endpoint_id)
            group = text(f"{NAMESPACE}/", endpoint_name)
            stream = arn("logs", text("log-group:", group, f":log-stream:{A_STREAM}"))
            for action in ("logs:CreateLogStream", "logs:PutLogEvents"):
                walk.need(who, policy, Request(action, stream), f"{endpoint_id}'s log group")
        walk.need(
            who,
            policy,
            Request(
                "cloudwatch:PutMetricData", text("*"), {"cloudwatch:namespace": text(NAMESPACE)}
            ),
            f"metrics in {NAMESPACE}",
        )
        for artifact in _adapters_on(resolve, model_id):
            _read_weights(walk, who, resolve, role, artifact, "S3Object")
        walk.walked.append(model_id)
    _adapter_readers(walk, resolve)
    return walk


def _adapters_on(resolve: Resolver, model_id: str) -> list[Text]:
    """The ``ArtifactUrl`` of every adapter component whose base component serves
    ``model_id``."""
    components = of_type(resolve.template, "AWS::SageMaker::InferenceComponent")
    bases = {
        render(resolve.name(component_id))
        for component_id, component in components.items()
        if model_id in references(component["Properties"].get("Specification", {}))
    }
    return [
        resolve(spec["Container"]["ArtifactUrl"])
        for component in components.values()
        for spec in [component["Properties"].get("Specification", {})]
        if "ArtifactUrl" in spec.get("Container", {})
        and render(resolve(spec.get("BaseInferenceComponentName", ""))) in bases
    ]


def _adapter_readers(walk: Walk, resolve: Resolver) -> None:
    """An endpoint config's own execution role (an endpoint hosting components) may read the
    adapter artifacts of the components on its endpoint, as its models' roles may: which of
    the two SageMaker uses to load an adapter is not documented, so both are walked."""
    endpoints = of_type(resolve.template, "AWS::SageMaker::Endpoint")
    for endpoint_id, endpoint in endpoints.items():
        (config_id,) = set(references(endpoint["Properties"]["EndpointConfigName"]))
        role_ref = resolve.resources[config_id]["Properties"].get("ExecutionRoleArn")
        if role_ref is None or "Fn::GetAtt" not in role_ref:
            continue
        role = role_ref["Fn::GetAtt"][0]
        who = f"{config_id}'s execution role {role}"
        for component in of_type(resolve.template, "AWS::SageMaker::InferenceComponent").values():
            props = component["Properties"]
            artifact = props.get("Specification", {}).get("Container", {}).get("ArtifactUrl")
            if artifact is not None and endpoint_id in references(props["EndpointName"]):
                _read_weights(walk, who, resolve, role, resolve(artifact), "S3Object")


def _image(walk: Walk, who: str, policy: Any, image: Text) -> None:
    repository = ecr_repository_arn(image)
    if repository is None:
        walk.problems.append(f"{walk.template}: {who}: image {render(image)} is not in ECR")
        return
    for action in ("ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"):
        walk.need(who, policy, Request(action, repository), f"image {render(image)}")
    walk.need(who, policy, Request("ecr:GetAuthorizationToken", text("*")), "ECR login")


def _weights(container: dict[str, Any], resolve: Resolver) -> list[tuple[Text, str]]:
    found = []
    if "ModelDataUrl" in container:
        found.append((resolve(container["ModelDataUrl"]), "S3Object"))
    source = container.get("ModelDataSource", {}).get("S3DataSource")
    if source:
        found.append((resolve(source["S3Uri"]), source["S3DataType"]))
    return found


def _read_weights(walk: Walk, who: str, resolve: Resolver, role: str, uri: Text, kind: str) -> None:
    policy = identity_policy(resolve, role)
    bucket, key = s3_location(uri)
    bucket_arn = text("arn:", PARTITION, ":s3:::", bucket)
    bucket_id = template_bucket(resolve, bucket)
    guards = guards_for(resolve, bucket_id, role)
    what = f"weights {render(uri)}"
    if kind == "S3Prefix":
        request = Request("s3:ListBucket", bucket_arn, {"s3:prefix": key})
        walk.need(who, policy, request, what, guards=guards)
        key = text(key, AN_OBJECT)
    object_arn = text(bucket_arn, "/", key)
    walk.need(who, policy, Request("s3:GetObject", object_arn), what, guards=guards)
    key_id = bucket_key(resolve, bucket_id)
    use_key(walk, who, resolve, role, key_id, ("kms:Decrypt",), f"the key of {what}")


def _async_output(walk: Walk, who: str, resolve: Resolver, role: str, config_id: str) -> None:
    """An asynchronous endpoint's role writes each result (or failure) under its S3 paths and
    publishes to its notification topics ("Asynchronous inference", the execution role's
    ``s3:PutObject`` and ``sns:Publish``), through each bucket's and topic's KMS key
    (``kms:GenerateDataKey`` for an SSE-KMS object, "Using server-side encryption with AWS
    KMS keys"; ``kms:GenerateDataKey`` and ``kms:Decrypt`` to publish to an encrypted topic,
    "Amazon SNS encryption at rest")."""
    config = resolve.resources[config_id]["Properties"].get("AsyncInferenceConfig")
    if config is None:
        return
    output = config["OutputConfig"]
    policy = identity_policy(resolve, role)
    for path_key in ("S3OutputPath", "S3FailurePath"):
        if path_key not in output:
            continue
        uri = resolve(output[path_key])
        bucket, prefix = s3_location(uri)
        bucket_id = template_bucket(resolve, bucket)
        what = f"{config_id}'s {path_key} {render(uri)}"
        result = text("arn:", PARTITION, ":s3:::", bucket, "/", prefix, "request-id.out")
        walk.need(
            who,
            policy,
            Request("s3:PutObject", result),
            what,
            guards=guards_for(resolve, bucket_id, role),
        )
        keys = ("kms:GenerateDataKey",)
        key_of = f"the key of {what}"
        use_key(walk, who, resolve, role, bucket_key(resolve, bucket_id), keys, key_of)
        if "KmsKeyId" in output:
            use_key(walk, who, resolve, role, _key_id(resolve, output["KmsKeyId"]), keys, key_of)
    for topic_key, topic in output.get("NotificationConfig", {}).items():
        if not topic_key.endswith("Topic"):
            continue
        what = f"{config_id}'s {topic_key}"
        topic_ids = [
            r for r in references(topic) if resolve.resources[r]["Type"] == "AWS::SNS::Topic"
        ]
        walk.need(
            who,
            policy,
            Request("sns:Publish", resolve(topic)),
            what,
            guards=guards_for(resolve, topic_ids[0] if topic_ids else None, role),
        )
        for topic_id in topic_ids:
            key = resolve.resources[topic_id]["Properties"].get("KmsMasterKeyId")
            actions = ("kms:GenerateDataKey", "kms:Decrypt")
            use_key(walk, who, resolve, role, _key_id(resolve, key), actions, f"the key of {what}")


def guards_for(resolve: Resolver, logical_id: str | None, role: str) -> list[Any]:
    if logical_id is None:
        return []
    return guards_of(resolve, logical_id, ("AWS", resolve.attribute(role, "Arn")))


def use_key(
    walk: Walk,
    who: str,
    resolve: Resolver,
    role: str,
    key_id: str | None,
    actions: tuple[str, ...],
    what: str,
) -> None:
    if key_id is None:
        return
    for action in actions:
        request = Request(action, resolve.attribute(key_id, "Arn"))
        allowed, why = key_allows(resolve, key_id, role, request)
        if not allowed:
            walk.problems.append(
                f"{walk.template}: {who} may not {action} on {key_id} ({what}): {why}"
            )


def _key_id(resolve: Resolver, key: Any) -> str | None:
    """The template's KMS key ``key`` names (an AWS managed key or an imported one: None)."""
    if key is None:
        return None
    ids = [k for k in references(key) if resolve.resources[k]["Type"] == "AWS::KMS::Key"]
    return ids[0] if ids else None


def template_bucket(resolve: Resolver, bucket: Text) -> str | None:
    """The template's bucket named ``bucket``, or None for a bucket outside the template."""
    for bucket_id, resource in resolve.resources.items():
        if resource["Type"] == "AWS::S3::Bucket" and resolve.name(bucket_id) == bucket:
            return bucket_id
    return None


def bucket_key(resolve: Resolver, bucket_id: str | None) -> str | None:
    """The template's KMS key that encrypts the template's bucket ``bucket_id``."""
    if bucket_id is None:
        return None
    encryption = resolve.resources[bucket_id]["Properties"].get("BucketEncryption", {})
    for rule in encryption.get("ServerSideEncryptionConfiguration", []):
        key = rule.get("ServerSideEncryptionByDefault", {}).get("KMSMasterKeyID")
        if key is not None:
            return _key_id(resolve, key)
    return None


def _volume_key(walk: Walk, who: str, resolve: Resolver, role: str, config_id: str) -> None:
    key = resolve.resources[config_id]["Properties"].get("KmsKeyId")
    if key is None:
        return
    key_id = _key_id(resolve, key)
    if key_id is None:
        walk.problems.append(f"{walk.template}: {config_id}'s volume key is not in the template")
    what = f"the volume key of {config_id}"
    use_key(walk, who, resolve, role, key_id, VOLUME_KEY_ACTIONS, what)


def _endpoints_hosting(template: dict[str, Any], model_id: str) -> list[tuple[str, str]]:
    """(endpoint, endpoint config) of every endpoint serving ``model_id``: in a production
    variant of its config, or through an inference component on it."""
    hosting: list[tuple[str, str]] = []
    configs = of_type(template, "AWS::SageMaker::EndpointConfig")
    endpoints = of_type(template, "AWS::SageMaker::Endpoint")
    config_of = {
        endpoint_id: next(iter(references(e["Properties"]["EndpointConfigName"])))
        for endpoint_id, e in endpoints.items()
    }
    for endpoint_id, config_id in config_of.items():
        variants = configs[config_id]["Properties"]["ProductionVariants"]
        variants += configs[config_id]["Properties"].get("ShadowProductionVariants", [])
        if any(model_id in references(v) for v in variants):  # ModelName, pool overrides
            hosting.append((endpoint_id, config_id))
    for component in of_type(template, "AWS::SageMaker::InferenceComponent").values():
        props = component["Properties"]
        if model_id in references(props.get("Specification", {}).get("ModelName", {})):
            (endpoint_id,) = set(references(props["EndpointName"]))
            hosting.append((endpoint_id, config_of[endpoint_id]))
    return hosting
