"""A real Secrets Manager API on loopback (moto's server), reached through boto3.

The runtime finds it through boto3's standard ``AWS_ENDPOINT_URL_SECRETS_MANAGER`` variable,
exactly as it would find the service itself; no code path is stubbed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.streaming.conftest import FAKE_AWS_ENV

__all__ = ["LocalSecretsManager", "local_secrets_manager"]


@dataclass
class LocalSecretsManager:
    url: str
    client: Any

    def create(self, name: str, keys: str | Sequence[str]) -> str:
        """A secret holding one key (a string) or ``{"api_keys": [...]}``; returns its ARN."""
        arn: str = self.client.create_secret(Name=name, SecretString=_secret_string(keys))["ARN"]
        return arn

    def put(self, secret_id: str, keys: str | Sequence[str]) -> None:
        """A new current version, as a rotation writes it."""
        self.client.put_secret_value(SecretId=secret_id, SecretString=_secret_string(keys))

    def delete(self, secret_id: str) -> None:
        """Schedule the secret's deletion: reads fail (``InvalidRequestException``) until it is
        restored, as when Secrets Manager refuses a read."""
        self.client.delete_secret(SecretId=secret_id, RecoveryWindowInDays=7)

    def restore(self, secret_id: str) -> None:
        self.client.restore_secret(SecretId=secret_id)


@contextmanager
def local_secrets_manager() -> Iterator[LocalSecretsManager]:
    """moto's threaded server on 127.0.0.1 (an ephemeral port) and a boto3 client for it."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        client = boto3.session.Session().client(
            "secretsmanager",
            endpoint_url=url,
            region_name=FAKE_AWS_ENV["AWS_REGION"],
            aws_access_key_id=FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
        )
        yield LocalSecretsManager(url=url, client=client)
    finally:
        server.stop()


def _secret_string(keys: str | Sequence[str]) -> str:
    return keys if isinstance(keys, str) else json.dumps({"api_keys": list(keys)})
