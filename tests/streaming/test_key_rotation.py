"""API-key rotation as the docs give it, end to end: the README's secret (created in its
`{"api_keys": [...]}` form) and its key extraction, then the rotation's two
`put-secret-value` commands, each `--secret-string` as bash expands it and put with
`PutSecretValue` (the operation the AWS CLI command calls) into a real Secrets Manager API on
loopback, while the unchanged `openai` SDK calls the runtime, started as the Lambda starts it
(`run.sh`, a process of its own): key A works; A and B both work; then B alone.

The AWS CLI itself is not run here: a shell function records each `aws` command's arguments
after bash's expansion, so what is tested is the commands' words and the JSON they carry."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import openai
import pytest

from tests.streaming.conftest import SOCKET_TIMEOUT
from tests.support import engine_streams
from tests.support.fake_sagemaker import FakeSageMaker, Scenario
from tests.support.patience import patience
from tests.support.runtime_process import serving
from tests.support.secrets_manager import LocalSecretsManager, local_secrets_manager

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent.parent
TTL = 0.2  # seconds the runtime keeps the keys (API_KEYS_TTL_SECONDS)
SECRET_NAME = "llm/api-keys"  # the name the README and the docs use

#: A bash function in place of the AWS CLI: it appends the command's arguments, as bash
#: expanded them, to $RECORD as one JSON list per line.
RECORDER = (
    'aws() { "$PYTHON" -c \'import json, sys; print(json.dumps(sys.argv[1:]))\' "$@" '
    '>> "$RECORD"; }\n'
)


def _expanded(commands: str, tmp_path: Path, **variables: str) -> list[list[str]]:
    """The arguments of each `aws` command in ``commands``, as bash expands them."""
    record = tmp_path / f"record-{time.monotonic_ns()}.jsonl"
    env = {"PATH": "/usr/bin:/bin", "PYTHON": sys.executable, "RECORD": str(record), **variables}
    result = subprocess.run(
        ["bash", "-e", "-c", RECORDER + commands],
        env=env,
        capture_output=True,
        text=True,
        timeout=patience(60),
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in record.read_text().splitlines()]


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def _readme() -> str:
    return (ROOT / "README.md").read_text()


def _rotation_block() -> str:
    page = (ROOT / "docs" / "front-doors.md").read_text()
    after = page.split("**Rotating a key.**", 1)[1]
    (block,) = re.findall(r"```bash\n(.*?)```", after.split("\n**", 1)[0], re.S)
    return str(block)


def _create_command() -> str:
    """The README's command that creates the keys' secret."""
    line = re.search(r"`(aws secretsmanager create-secret --name llm/api-keys [^`]+)`", _readme())
    assert line, "the README creates the keys' secret"
    return line.group(1)


def _key_extraction_code() -> str:
    """The Python of the README's `KEY=$(aws secretsmanager get-secret-value ... | python3 -c
    '...')`."""
    match = re.search(
        r"KEY=\$\(aws secretsmanager get-secret-value --secret-id llm/api-keys --query "
        r"SecretString \\\n\s+--output text \| python3 -c '([^']+)'\)",
        _readme(),
    )
    assert match, "the README extracts KEY from the secret's JSON"
    return match.group(1)


@pytest.fixture(scope="module")
def secrets() -> Iterator[LocalSecretsManager]:
    with local_secrets_manager() as local:
        yield local


def test_the_readme_creates_the_secret_in_its_json_form_and_extracts_the_key(
    tmp_path: Path,
) -> None:
    # GIVEN the README's create-secret command, as bash expands it
    (command,) = _expanded(_create_command(), tmp_path)
    assert command[:4] == ["secretsmanager", "create-secret", "--name", SECRET_NAME]
    secret_string = _option(command, "--secret-string")
    (key,) = json.loads(secret_string)["api_keys"]
    assert re.fullmatch(r"[0-9a-f]{64}", key)  # openssl rand -hex 32
    # WHEN the README's pipeline reads the AWS CLI's text output (the string and a newline)
    extracted = subprocess.run(
        [sys.executable, "-c", _key_extraction_code()],
        input=secret_string + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # THEN it prints the key alone
    assert extracted == key + "\n"


def test_the_documented_rotation_overlaps_two_keys_then_removes_the_old_one(
    tmp_path: Path,
    fake: FakeSageMaker,
    aws_env: dict[str, str],
    secrets: LocalSecretsManager,
) -> None:
    # GIVEN the secret as the README creates it, and the runtime reading it
    (create,) = _expanded(_create_command(), tmp_path)
    (old_key,) = json.loads(_option(create, "--secret-string"))["api_keys"]
    arn = secrets.client.create_secret(
        Name=_option(create, "--name"), SecretString=_option(create, "--secret-string")
    )["ARN"]
    # AND the docs' two commands, with KEY the key clients use now
    first, second = _expanded(_rotation_block(), tmp_path, KEY=old_key)
    for command in (first, second):
        assert command[:4] == ["secretsmanager", "put-secret-value", "--secret-id", SECRET_NAME]
    both = json.loads(_option(first, "--secret-string"))["api_keys"]
    new_key = both[1]
    assert both == [old_key, new_key] and new_key != old_key
    assert json.loads(_option(second, "--secret-string")) == {"api_keys": [new_key]}

    settings = {
        "ENDPOINT_NAME": "chat",
        "STREAM_FORMAT": "tgi",
        "API_KEYS_SECRET_ID": arn,
        "API_KEYS_TTL_SECONDS": str(TTL),
        "AWS_ENDPOINT_URL_SECRETS_MANAGER": secrets.url,
    }
    with serving(tmp_path, aws_env, **settings) as (_, url):
        accepts = _acceptance(f"{url}/v1", fake)
        # THEN key A works, and B not yet
        assert accepts(old_key) and not accepts(new_key)
        # WHEN step 1 puts both keys: B is accepted within the TTL, and A still is
        secrets.client.put_secret_value(
            SecretId=SECRET_NAME, SecretString=_option(first, "--secret-string")
        )
        assert _within_ttl(lambda: accepts(new_key))
        assert accepts(old_key)
        # WHEN step 2 removes A: A is refused within the TTL, and B keeps working
        secrets.client.put_secret_value(
            SecretId=SECRET_NAME, SecretString=_option(second, "--secret-string")
        )
        assert _within_ttl(lambda: not accepts(old_key))
        assert accepts(new_key)


def _acceptance(base_url: str, fake: FakeSageMaker) -> Callable[[str], bool]:
    """Whether a streamed chat with ``api_key`` is answered (True) or gets 401 (False)."""

    def accepts(api_key: str) -> bool:
        fake.reset()
        fake.enqueue(Scenario(parts=engine_streams.tgi(["o", "k"])))
        client = openai.OpenAI(
            base_url=base_url, api_key=api_key, max_retries=0, timeout=SOCKET_TIMEOUT
        )
        try:
            stream = client.chat.completions.create(
                model="chat", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        except openai.AuthenticationError:
            return False
        assert text == "ok"
        return True

    return accepts


def _within_ttl(check: Callable[[], bool]) -> bool:
    """True once ``check`` holds, at most ``SOCKET_TIMEOUT`` after the put that should make it
    hold (the TTL is far shorter: the bound is for a loaded machine)."""
    deadline = time.monotonic() + SOCKET_TIMEOUT
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(TTL / 4)
    return True
