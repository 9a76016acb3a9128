"""A synthesized template's values resolved symbolically: what CloudFormation would put in a
property, with every value only a deploy knows (a pseudo parameter, a generated name, a key id)
kept as a :class:`Token` that names where it comes from.

``Ref``, ``Fn::GetAtt``, ``Fn::Join``, ``Fn::Sub``, ``Fn::FindInMap``, ``Fn::Select`` and
``Fn::Split`` are resolved; a ``Ref`` or ``Fn::GetAtt`` of a resource becomes the value the
CloudFormation resource reference documents for its type (an endpoint's ``Ref`` is its ARN, a
bucket's its name, a log group's ``Arn`` ends in ``:*``), built from the resource's own name,
so the same resource reached by two paths resolves to the same text. Anything else raises
:class:`Unresolved`: a walk never passes on a value it did not understand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ACCOUNT",
    "PARTITION",
    "REGION",
    "SECRET_SUFFIX",
    "Part",
    "Resolver",
    "Text",
    "Token",
    "Unresolved",
    "arn",
    "is_literal",
    "literal",
    "references",
    "render",
    "sagemaker_arn",
    "split",
    "text",
]


@dataclass(frozen=True)
class Token:
    """A value CloudFormation knows only at deploy time, named by where it comes from."""

    name: str

    def __str__(self) -> str:
        return "${" + self.name + "}"


Part = str | Token
#: A resolved value: literal strings and tokens, adjacent strings merged.
Text = tuple[Part, ...]

PARTITION = Token("AWS::Partition")
REGION = Token("AWS::Region")
ACCOUNT = Token("AWS::AccountId")
#: The six random characters Secrets Manager appends to a secret's name in its ARN: a name
#: matches a policy's ``name-??????`` as the real secret's ARN does.
SECRET_SUFFIX = "-AbCdEf"


class Unresolved(ValueError):
    """A value this resolver does not evaluate (a condition, an import, a parameter's list,
    an index past a list of literals)."""


def text(*parts: Part | Text) -> Text:
    """Parts and texts concatenated, adjacent strings merged, empty strings dropped."""
    out: list[Part] = []
    for part in parts:
        for piece in part if isinstance(part, tuple) else (part,):
            if isinstance(piece, str):
                if not piece:
                    continue
                if out and isinstance(out[-1], str):
                    out[-1] += piece
                    continue
            out.append(piece)
    return tuple(out)


def render(value: Text) -> str:
    """``value`` as one string, tokens as ``${name}``."""
    return "".join(str(part) for part in value)


def is_literal(value: Text) -> bool:
    return all(isinstance(part, str) for part in value)


def literal(value: Text) -> str:
    if not is_literal(value):
        raise Unresolved(f"not a literal: {render(value)}")
    return "".join(str(part) for part in value)


def split(value: Text, separator: str, maxsplit: int = -1) -> list[Text]:
    """``value`` split on ``separator`` in its literal parts (a token is never split)."""
    pieces: list[list[Part]] = [[]]
    for part in value:
        if isinstance(part, Token):
            pieces[-1].append(part)
            continue
        chunks = part.split(separator)
        for index, chunk in enumerate(chunks):
            if index and (maxsplit < 0 or len(pieces) <= maxsplit):
                pieces.append([])
            elif index:
                pieces[-1].append(separator)
            pieces[-1].append(chunk)
    return [text(*piece) for piece in pieces]


def arn(service: str, resource: Text | str, *, region: bool = True, account: bool = True) -> Text:
    """An ARN in the stack's own partition, region and account."""
    return text(
        "arn:",
        PARTITION,
        f":{service}:",
        REGION if region else "",
        ":",
        ACCOUNT if account else "",
        ":",
        resource,
    )


def sagemaker_arn(kind: str, name: Text) -> Text:
    """A SageMaker resource ARN of ``kind`` (``endpoint``, ``inference-component``, ...)."""
    # SageMaker returns its resources' ARNs with the name in lower case (CloudFormation's Ref
    # of an endpoint named "Chat-A" ends in "endpoint/chat-a"; policies built from the name's
    # capitals fail, awslabs/service-workbench-on-aws#1177): a literal name is lowered here,
    # in a policy's ARN and a request's alike, so a policy that spells the capitals fails.
    lowered = tuple(p.lower() if isinstance(p, str) else p for p in name)
    return arn("sagemaker", text(f"{kind}/", lowered))


@dataclass(frozen=True)
class _Kind:
    """What ``Ref`` and ``Fn::GetAtt`` return for one resource type: each from the resource's
    name (its name property when the template gives it, else a token)."""

    name_property: str | None
    ref: Callable[[Text, str], Text]
    attributes: Mapping[str, Callable[[Text, str], Text]]


def _token(attribute: str) -> Callable[[Text, str], Text]:
    return lambda name, logical_id: (Token(f"{logical_id}.{attribute}"),)


def _name(name: Text, logical_id: str) -> Text:
    return name


#: Per resource type, from the "Return values" section of each type's page in the
#: CloudFormation template reference (AWS::SageMaker::Endpoint: "Ref returns the ARN"; ...).
_KINDS: dict[str, _Kind] = {
    "AWS::SageMaker::Endpoint": _Kind(
        "EndpointName",
        lambda n, i: sagemaker_arn("endpoint", n),
        {"EndpointName": _name, "EndpointArn": lambda n, i: sagemaker_arn("endpoint", n)},
    ),
    "AWS::SageMaker::EndpointConfig": _Kind(
        "EndpointConfigName",
        lambda n, i: sagemaker_arn("endpoint-config", n),
        {"EndpointConfigName": _name},
    ),
    "AWS::SageMaker::Model": _Kind(
        "ModelName",
        lambda n, i: sagemaker_arn("model", n),
        {"ModelName": _name, "ModelArn": lambda n, i: sagemaker_arn("model", n)},
    ),
    "AWS::SageMaker::InferenceComponent": _Kind(
        "InferenceComponentName",
        lambda n, i: sagemaker_arn("inference-component", n),
        {
            "InferenceComponentName": _name,
            "InferenceComponentArn": lambda n, i: sagemaker_arn("inference-component", n),
        },
    ),
    "AWS::SecretsManager::Secret": _Kind(
        "Name",
        lambda n, i: arn("secretsmanager", text("secret:", n, SECRET_SUFFIX)),
        {"Id": lambda n, i: arn("secretsmanager", text("secret:", n, SECRET_SUFFIX))},
    ),
    "AWS::KMS::Key": _Kind(
        None,
        _name,
        {"Arn": lambda n, i: arn("kms", text("key/", n)), "KeyId": _name},
    ),
    "AWS::S3::Bucket": _Kind(
        "BucketName",
        _name,
        {"Arn": lambda n, i: text("arn:", PARTITION, ":s3:::", n)},
    ),
    "AWS::SNS::Topic": _Kind(
        "TopicName",
        lambda n, i: arn("sns", n),
        {"TopicArn": lambda n, i: arn("sns", n), "TopicName": _name},
    ),
    "AWS::Logs::LogGroup": _Kind(
        "LogGroupName",
        _name,
        {"Arn": lambda n, i: arn("logs", text("log-group:", n, ":*"))},
    ),
    "AWS::Lambda::Function": _Kind(
        "FunctionName",
        _name,
        {"Arn": lambda n, i: arn("lambda", text("function:", n))},
    ),
    # "Ref returns the ARN of the created state machine", arn:${Partition}:states:${Region}:
    # ${Account}:stateMachine:${StateMachineName} (its template reference page, and "Actions,
    # resources, and condition keys for AWS Step Functions"): CDK selects its name as piece 6
    "AWS::StepFunctions::StateMachine": _Kind(
        "StateMachineName",
        lambda n, i: arn("states", text("stateMachine:", n)),
        {"Arn": lambda n, i: arn("states", text("stateMachine:", n)), "Name": _name},
    ),
    "AWS::IAM::Role": _Kind(
        "RoleName",
        _name,
        {"Arn": lambda n, i: arn("iam", text("role/", n), region=False)},
    ),
}


class Resolver:
    """Resolves the values of one template (its ``Resources`` and ``Mappings``)."""

    def __init__(self, template: Mapping[str, Any]) -> None:
        self.template = template
        self.resources: Mapping[str, Any] = template.get("Resources", {})

    def __call__(self, node: Any) -> Text:
        return self.resolve(node)

    def resolve(self, node: Any) -> Text:
        if isinstance(node, str):
            return text(node)
        if isinstance(node, bool):
            return text(str(node).lower())
        if isinstance(node, int | float):
            return text(str(node))
        if not isinstance(node, dict) or len(node) != 1:
            raise Unresolved(f"not a value this resolver evaluates: {node!r}")
        ((function, argument),) = node.items()
        if function == "Ref":
            return self._ref(argument)
        if function == "Fn::GetAtt":
            logical_id, attribute = (
                argument if isinstance(argument, list) else str(argument).split(".", 1)
            )
            return self.attribute(logical_id, attribute)
        if function == "Fn::Join":
            separator, parts = argument
            if not isinstance(parts, list):
                raise Unresolved(f"Fn::Join of a list this resolver does not build: {parts!r}")
            joined: list[Part | Text] = []
            for index, part in enumerate(parts):
                if index:
                    joined.append(separator)
                joined.append(self.resolve(part))
            return text(*joined)
        if function == "Fn::Sub":
            return self._sub(argument)
        if function == "Fn::FindInMap":
            mapping, first, second = (self.resolve(part) for part in argument)
            if is_literal(first) and is_literal(second):
                value = self.template["Mappings"][literal(mapping)][literal(first)][literal(second)]
                return self.resolve(value)
            return (Token(f"Fn::FindInMap:{render(mapping)}[{render(first)}][{render(second)}]"),)
        if function == "Fn::Select":
            index, items = argument
            position = int(literal(self.resolve(index)))
            values = self._list(items)
            if position < len(values):
                return values[position]
            if isinstance(items, dict) and any(isinstance(p, Token) for v in values for p in v):
                # a split of a value holding a token (a resource this resolver has no return
                # values for): the token may hold separators, so the pieces past those seen
                # are known only at deploy time
                (separator, source) = items["Fn::Split"]
                return (Token(f"Fn::Select:{position}:Fn::Split:{separator}:{source}"),)
            raise Unresolved(f"Fn::Select index {position} out of a list of {len(values)}")
        raise Unresolved(f"not an intrinsic function this resolver evaluates: {function}")

    def _list(self, node: Any) -> list[Text]:
        if isinstance(node, list):
            return [self.resolve(item) for item in node]
        if isinstance(node, dict) and set(node) == {"Fn::Split"}:
            separator, source = node["Fn::Split"]
            return split(self.resolve(source), separator)
        raise Unresolved(f"not a list this resolver evaluates: {node!r}")

    def _ref(self, name: str) -> Text:
        if name.startswith("AWS::"):
            return (Token(name),)
        if name in self.template.get("Parameters", {}):
            return (Token(f"Parameter:{name}"),)
        resource = self.resources[name]
        kind = _KINDS.get(resource["Type"])
        if kind is None:
            return (Token(name),)
        return kind.ref(self.name(name), name)

    def name(self, logical_id: str) -> Text:
        """A resource's name: its name property when the template gives one, else a token."""
        resource = self.resources[logical_id]
        kind = _KINDS.get(resource["Type"])
        prop = kind.name_property if kind else None
        given = resource.get("Properties", {}).get(prop) if prop else None
        if given is not None:
            return self.resolve(given)
        return (Token(f"{logical_id}.{prop or 'Id'}"),)

    def attribute(self, logical_id: str, attribute: str) -> Text:
        resource = self.resources[logical_id]
        if resource["Type"] == "AWS::Lambda::Url" and attribute == "FunctionArn":
            return self.resolve(resource["Properties"]["TargetFunctionArn"])
        kind = _KINDS.get(resource["Type"])
        rule = kind.attributes.get(attribute) if kind else None
        if rule is None:
            return (Token(f"{logical_id}.{attribute}"),)
        return rule(self.name(logical_id), logical_id)

    def _sub(self, argument: Any) -> Text:
        template, variables = (argument, {}) if isinstance(argument, str) else argument
        parts: list[Part | Text] = []
        position = 0
        for match in re.finditer(r"\$\{([^}]*)\}", template):
            parts.append(template[position : match.start()])
            position = match.end()
            inner = match.group(1)
            if inner.startswith("!"):
                parts.append("${" + inner[1:] + "}")
            elif inner in variables:
                parts.append(self.resolve(variables[inner]))
            elif "." in inner and not inner.startswith("AWS::"):
                logical_id, attribute = inner.split(".", 1)
                parts.append(self.attribute(logical_id, attribute))
            else:
                parts.append(self._ref(inner))
        parts.append(template[position:])
        return text(*parts)

    def json(self, node: Any) -> Any:
        """A value that holds JSON (a ``Fn::Join`` of a JSON document around tokens), parsed,
        with each token back in place as a :class:`Text` of its string."""
        resolved = self.resolve(node)
        tokens: list[Token] = []
        rendered = []
        for part in resolved:
            if isinstance(part, Token):
                rendered.append(f"\u27e6{len(tokens)}\u27e7")
                tokens.append(part)
            else:
                rendered.append(part)

        def restore(value: Any) -> Any:
            if isinstance(value, str):
                pieces = re.split("\u27e6(\\d+)\u27e7", value)
                return text(*(tokens[int(p)] if i % 2 else p for i, p in enumerate(pieces)))
            if isinstance(value, list):
                return [restore(item) for item in value]
            if isinstance(value, dict):
                return {key: restore(item) for key, item in value.items()}
            return value

        return restore(json.loads("".join(rendered)))


def references(node: Any) -> Iterable[str]:
    """The logical ids ``node`` names by ``Ref`` or ``Fn::GetAtt`` (not pseudo parameters)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str) and not value.startswith("AWS::"):
                yield value
            elif key == "Fn::GetAtt":
                yield value[0] if isinstance(value, list) else str(value).split(".")[0]
            else:
                yield from references(value)
    elif isinstance(node, list):
        for item in node:
            yield from references(item)
