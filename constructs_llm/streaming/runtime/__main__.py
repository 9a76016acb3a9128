"""Start the runtime server: ``python -m constructs_llm.streaming.runtime``.

In the Lambda code asset the runtime directory is a top-level package, and ``run.sh`` starts
it as ``python3 -m runtime``; every import inside the package is relative, so both names work.
Configuration comes from the environment (``settings.py``); a bad environment, or no AWS
region, exits with status 2 and one message listing every problem. The boto3 client is built
before the server listens, so the adapter's readiness check passes only once the first request
can be served at full speed.

How the Lambda function must be configured (zip package, Lambda Web Adapter layer):

- code asset: a directory holding ``runtime/`` (this package, ``run.sh`` mode 755 with LF
  endings) and nothing else; no bundling, boto3 comes with the Python runtime;
- runtime ``python3.12`` (or newer), handler ``runtime/run.sh``;
- layer ``arn:aws:lambda:<region>:753240598075:layer:LambdaAdapterLayerX86:<N>`` (or
  ``LambdaAdapterLayerArm64`` for arm64);
- adapter environment: ``AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap``,
  ``AWS_LWA_INVOKE_MODE=response_stream``, ``AWS_LWA_READINESS_CHECK_PATH=/health``,
  ``PORT=8080`` (read by both the adapter and the server);
- runtime environment: ``ENDPOINT_NAME`` (required), ``INFERENCE_COMPONENT_NAME`` (for an
  inference component), ``STREAM_FORMAT`` and ``REQUEST_FORMAT`` (from the engine),
  ``MODEL_NAME`` (optional), or instead ``ROUTES`` for several models (``routing.py``),
  ``UPSTREAM_READ_TIMEOUT`` (below the function timeout),
  ``MAX_BODY_BYTES`` (optional), ``HEARTBEAT_SECONDS`` (optional, e.g. ``10`` behind CloudFront),
  ``API_KEYS_SECRET_ID`` (optional: Bearer keys, see ``http/auth.py``; the role then needs
  ``secretsmanager:GetSecretValue`` on that secret), ``ORIGIN_SECRET_ID`` (optional: the
  secret CloudFront sends as ``x-origin-verify``, see ``http/origin_secret.py``; likewise),
  ``CORS_ALLOWED_ORIGINS`` (optional: CORS, see ``http/cors.py``);
- function URL with ``InvokeMode: RESPONSE_STREAM``; the role needs
  ``sagemaker:InvokeEndpoint`` on the endpoint.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from .aws_clients import RegionMissingError
from .http.exchange import emit_log_line
from .server import make_server
from .settings import Settings, SettingsError, sagemaker_client


def main() -> int:
    try:
        settings = Settings.from_env(os.environ)
        # Build the boto3 client now, during init, so the first request does not pay for it.
        sagemaker_client(settings)
    except (SettingsError, RegionMissingError) as err:
        print(f"constructs-llm streaming runtime: {err}", file=sys.stderr)
        return 2
    server = make_server(settings)
    if server.origin is not None:  # read CloudFront's origin secret at start
        server.origin.load()
    if server.auth is not None:  # read the keys during init too; a failure is retried later
        server.auth.current_digests()
    signal.signal(signal.SIGTERM, _exit)
    emit_log_line(
        {
            "msg": "listening",
            "url": server.url,
            "routes": [
                {
                    "model": route.model,
                    "endpoint_name": route.endpoint_name,
                    "inference_component_name": route.inference_component_name,
                    "stream_format": route.stream_format.value,
                    "request_format": route.request_format.value,
                }
                for route in server.routes.routes
            ],
        }
    )
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _exit(signum: int, frame: Any) -> None:
    raise SystemExit(0)


if __name__ == "__main__":
    sys.exit(main())
