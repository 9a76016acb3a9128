"""Checks of the values ``ModelSource`` factories take: Hub ids, revisions, tokens, buckets,
prefixes and archive keys. Each returns a problem (or None) naming the value and the fix."""

from __future__ import annotations

import difflib
import re
from functools import cache

from constructs_llm import catalogs
from constructs_llm.cdk_values import cdk_kind
from constructs_llm.problems import Problem
from constructs_llm.s3_keys import folder_problem, key_problem
from constructs_llm.values import is_unresolved

# Hub rules: letters, digits, '-', '_', '.'; no '--' or '..'; '-' and '.' neither start nor end
# a part; the repository name is at most 96 characters.
_HUB_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_])?")
_MAX_HUB_NAME = 96
# Git ref names (branch or tag) or a commit hash.
_REVISION = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}")


def hub_id_problem(model_id: object) -> Problem | None:
    if not isinstance(model_id, str):
        return _not_a_string("model_id", model_id, "a Hub id string such as 'org/name'")
    if is_unresolved(model_id):
        return None
    hint = _hub_id_hint(model_id)
    if hint:
        return Problem.of(
            "model_id",
            model_id,
            f"model_id must be a Hub id 'org/name', got {model_id!r};",
            hint,
        )
    return None


def _not_a_string(prop: str, value: object, such: str) -> Problem:
    return Problem.of(prop, value, f"{prop} must be {such}, got {value!r}")


def _hub_id_hint(model_id: str) -> str | None:
    if model_id != model_id.strip() or any(c.isspace() for c in model_id):
        return f"remove the whitespace: {''.join(model_id.split())!r}"
    if model_id.startswith("s3://"):
        return "for weights in S3 use ModelSource.s3(bucket, prefix)"
    url = re.match(r"https?://(?:www\.)?huggingface\.co/([^/]+/[^/?#]+)", model_id)
    if url:
        return f"pass the id, not the URL: {url.group(1)!r}"
    parts = model_id.split("/")
    if len(parts) != 2:
        return (
            "the Hub id names the organisation or user too, e.g. 'openai-community/gpt2'"
            if len(parts) == 1
            else "it has exactly one '/', between organisation and name"
        )
    bad = [p for p in parts if not _HUB_PART.fullmatch(p) or "--" in p or ".." in p]
    if bad:
        return (
            f"{bad[0]!r} may use only letters, digits, '-', '_' and '.', without '--' or '..', "
            "and may not start or end with '-' or '.'"
        )
    if len(parts[1]) > _MAX_HUB_NAME:
        return f"the name part has {len(parts[1])} characters; the Hub allows {_MAX_HUB_NAME}"
    return None


def revision_problem(revision: object) -> Problem | None:
    if revision is None:
        return None
    if not isinstance(revision, str):
        return _not_a_string("revision", revision, "a string (branch, tag or commit)")
    if is_unresolved(revision):
        return None
    ok = (
        _REVISION.fullmatch(revision)
        and ".." not in revision
        and "//" not in revision
        and not revision.endswith(("/", ".", ".lock"))
    )
    if not ok:
        return Problem.of(
            "revision",
            revision,
            f"revision must be a branch, tag or commit hash, got {revision!r};",
            "use e.g. 'main' or a 40-character commit hash from the model's Files and versions tab",
        )
    return None


def token_problem(token: object) -> Problem | None:
    if token is None:
        return None
    if isinstance(token, str):
        shown = f"'{token[:5]}…'" if token.startswith("hf_") else "a string"
        return Problem.of(
            "token",
            shown,  # never the token itself
            f"token must be a Secrets Manager secret, got {shown}; a plain string would be "
            "readable in the template.",
            "Store the token in Secrets Manager (e.g. `aws "
            "secretsmanager create-secret --name hf/token --secret-string <token>`) and pass "
            "secretsmanager.Secret.from_secret_name_v2(self, 'HfToken', 'hf/token')",
        )
    if not cdk_kind(token, "aws_secretsmanager", "ISecret"):
        return Problem.of(
            "token",
            token,
            f"token must be a secretsmanager.ISecret, got {type(token).__name__}",
        )
    return None


def token_field_problem(field: object) -> Problem | None:
    if field is None or isinstance(field, str):
        return None
    return Problem.of(
        "token_json_field",
        field,
        f"token_json_field must be the name of a field of the JSON secret, such as 'token', "
        f"got {field!r}",
    )


def gated_problem(model_id: object, token: object, needs_token: object) -> Problem | None:
    """A repository the table marks gated (or ``needs_token=True``) with no token: the
    container's download is refused and the endpoint fails at deploy."""
    if needs_token is not None and not isinstance(needs_token, bool):
        return Problem.of(
            "needs_token",
            needs_token,
            f"needs_token must be True, False or None (from the model table), got {needs_token!r}",
        )
    if token is not None or needs_token is False or not isinstance(model_id, str):
        return None
    gated = catalogs.is_gated(model_id)
    if not (gated or needs_token):
        return None
    why = "is a gated Hugging Face repository" if gated else "needs a token (needs_token=True)"
    return Problem.of(
        "token",
        token,
        f"{model_id} {why} and no token is given, so the container cannot download it and the "
        "endpoint fails at deploy;",
        "accept the model's terms on the Hub, store that account's "
        "token in Secrets Manager (`aws secretsmanager create-secret --name hugging-face/token "
        "--secret-string <token>`) and pass token=secretsmanager.Secret.from_secret_name_v2("
        "self, 'HfToken', 'hugging-face/token'). If the container downloads through a Hub "
        "mirror or proxy that needs no token (HF_ENDPOINT in env), pass needs_token=False; "
        "weights staged in S3 need none either: ModelSource.s3(bucket, prefix, model_id=...)",
    )


#: How alike (difflib's ratio, case-insensitive) an id must be to a table id to be taken for a
#: typo of it: 'meta-llama/Llama-3-8B-Instruct' is 0.92 from the table's
#: 'meta-llama/Meta-Llama-3-8B-Instruct'; a real sibling such as 'Qwen/Qwen2.5-Coder-7B-Instruct'
#: is 0.89 from 'Qwen/Qwen2.5-7B-Instruct', and a fork under another organisation is below 0.8.
_TYPO_RATIO = 0.9


def hub_id_typo(model_id: str, *, hub: bool) -> str | None:
    """A warning when ``model_id`` is not in the packaged table but looks like a typo of an id
    that is (or None). Ids that extend a table id (``Qwen/Qwen3-8B-FP8``, a quantized copy)
    or carry other numbers (``Qwen/Qwen2-7B-Instruct``, another release) are not typos."""
    if is_unresolved(model_id):
        return None
    given = model_id.strip().lower()
    ids = _table_ids()
    if given in ids:
        return None
    alike = [known for known in ids if _digits(known) == _digits(given)]
    close = difflib.get_close_matches(given, alike, n=1, cutoff=_TYPO_RATIO)
    if not close or given.startswith(f"{close[0]}-"):
        return None
    match = ids[close[0]]
    effect = (
        "a Hub id that does not exist fails at deploy, when the container cannot download it"
        if hub
        else "the declared model_id only looks up the model's size, so memory fit is not checked"
    )
    return (
        f"{model_id!r} is not in the packaged model table but {match!r} is: did you mean "
        f"{match!r}? {effect}. If the id is right (a fork, or a model the table lacks), "
        "acknowledge this warning, and pass architecture=ModelArchitecture(...) to the model so "
        "memory fit is checked"
    )


@cache
def _table_ids() -> dict[str, str]:
    """Every id and alias of the model table, lower case, to its spelling in the table."""
    return {
        name.lower(): name for row in catalogs.models().models for name in (row.id, *row.aliases)
    }


def _digits(model_id: str) -> str:
    return "".join(re.findall(r"\d", model_id))


def declared_id_problem(model_id: str | None) -> Problem | None:
    return None if model_id is None else hub_id_problem(model_id)


def bucket_problem(bucket: object) -> Problem | None:
    if not cdk_kind(bucket, "aws_s3", "IBucket"):
        return Problem.of(
            "bucket",
            bucket,
            f"bucket must be an s3.IBucket, got {type(bucket).__name__} {bucket!r};",
            "use s3.Bucket.from_bucket_name(self, 'Weights', 'my-bucket')",
        )
    return None


def bucket_region_problem(bucket: object, region: str) -> Problem | None:
    """Weights in a bucket known to be in another region than the model's: "The model
    artifacts must be in an S3 bucket that is in the same region as the model or endpoint you
    are creating" (botocore 1.44.5, ``sagemaker`` ``ContainerDefinition.ModelDataUrl``), so
    CreateModel fails at deploy. Known means both regions are concrete: a bucket imported with
    ``region=`` (or created in a stack of a concrete region) and a model in a concrete region."""
    env = getattr(bucket, "env", None)
    where = getattr(env, "region", None)
    if not isinstance(where, str) or is_unresolved(where) or is_unresolved(region):
        return None
    if where == region:
        return None
    name = getattr(bucket, "bucket_name", None)
    shown = repr(name) if isinstance(name, str) and not is_unresolved(name) else "the bucket"
    return Problem.of(
        "bucket",
        bucket,
        f"the weights' bucket {shown} is in {where}, but the model deploys to {region}, and "
        "SageMaker reads model artifacts only from a bucket in the model's region;",
        "copy the "
        f"weights to a bucket in {region} (S3 replication or aws s3 sync), or deploy the model "
        f"in {where}",
    )


def prefix_problem(prefix: object) -> Problem | None:
    if not isinstance(prefix, str):
        return _not_a_string("prefix", prefix, "a string such as 'llama3-8b/'")
    if is_unresolved(prefix):
        return None
    if not prefix or prefix == "/":
        return Problem.of(
            "prefix",
            prefix,
            "prefix must name the folder holding the weights, e.g. 'llama3-8b/', got ''",
        )
    return key_problem("prefix", prefix, what="key prefix") or folder_problem(
        "prefix",
        prefix,
        why="SageMaker copies every object under it, and without the slash 'llama' would also "
        "match 'llama-old/'",
    )


def archive_key_problem(key: object) -> Problem | None:
    if not isinstance(key, str):
        return _not_a_string("key", key, "a string such as 'models/model.tar.gz'")
    if is_unresolved(key):
        return None
    problem = key_problem("key", key, what="object key")
    if problem or key.endswith(".tar.gz"):
        return problem
    hint = (
        "use ModelSource.s3(bucket, prefix) for uncompressed weights"
        if key.endswith("/")
        else "compress the weights as model.tar.gz"
    )
    return Problem.of("key", key, f"key must name a .tar.gz archive, got {key!r};", hint)
