"""iter_payload_parts / stream_events over the body boto3 really returns.

Frames are encoded as ``application/vnd.amazon.eventstream`` and decoded by botocore's own
EventStream and sagemaker-runtime response parser, so the helper sees what users see,
including ``EventStreamError`` for in-stream exceptions.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any, cast

import boto3  # type: ignore[import-untyped]
import botocore.config  # type: ignore[import-untyped]
import botocore.parsers  # type: ignore[import-untyped]
import botocore.session  # type: ignore[import-untyped]
import pytest
from urllib3.exceptions import ProtocolError, ReadTimeoutError

from constructs_llm.streaming.runtime.parsing.events import DoneEvent, ErrorEvent, TokenEvent
from constructs_llm.streaming.runtime.parsing.parser import UpstreamStreamError
from constructs_llm.streaming.runtime.parsing.sagemaker_stream import (
    iter_payload_parts,
    stream_events,
)
from tests.streaming.stream_fixtures import (
    CHUNKINGS,
    StreamFixture,
    as_dicts,
    load_fixtures,
    random_sizes,
)
from tests.support.eventstream import (
    encode_error,
    encode_event,
    encode_exception,
    encode_payload_part,
)

FIXTURES = load_fixtures()
OPERATION = "InvokeEndpointWithResponseStream"


class RawStream:
    """Stands in for the urllib3 response: ``stream()`` yields what the socket delivers."""

    def __init__(self, data: bytes, chunk: int = 7, fail: BaseException | None = None) -> None:
        self.data, self.chunk, self.fail = data, chunk, fail
        self.closed = False
        self.reads = 0

    def stream(self) -> Iterator[bytes]:
        for start in range(0, len(self.data), self.chunk):
            self.reads += 1
            yield self.data[start : start + self.chunk]
        if self.fail is not None:
            raise self.fail

    def close(self) -> None:
        self.closed = True


@pytest.fixture(scope="module")
def response_parser() -> Any:
    model = botocore.session.get_session().get_service_model("sagemaker-runtime")
    parser = botocore.parsers.create_parser(model.metadata["protocol"])
    return parser, model.operation_model(OPERATION).output_shape


@pytest.fixture
def boto_body(response_parser: Any) -> Any:
    """Build ``response["Body"]`` exactly as botocore does for the streaming call."""

    def build(raw: RawStream) -> Any:
        parser, shape = response_parser
        response = {
            "status_code": 200,
            "headers": {"content-type": "application/vnd.amazon.eventstream"},
            "body": raw,
            "context": {"operation_name": OPERATION},
        }
        return parser.parse(response, shape)["Body"]

    return build


def frames_for(payload: bytes, part_sizes: int = 3) -> bytes:
    parts = random_sizes(part_sizes, high=40)(payload)
    return b"".join(encode_payload_part(part) for part in parts)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name for f in FIXTURES])
def test_fixture_through_real_eventstream_frames(fixture: StreamFixture, boto_body: Any) -> None:
    # GIVEN the fixture cut into PayloadParts, whose frames arrive in 7-byte socket reads
    body = boto_body(RawStream(frames_for(fixture.raw)))
    # WHEN parsed from the boto3 body THEN the same events as from the raw bytes
    assert as_dicts(stream_events(body, fixture.fmt)) == fixture.events


def test_payload_parts_are_yielded_as_sent(boto_body: Any) -> None:
    parts = [b"data:{", b'"a":1}\n', "é🚀".encode()]
    frames = b"".join(encode_payload_part(p) for p in parts)
    for size in (1, 5, len(frames)):
        assert list(iter_payload_parts(boto_body(RawStream(frames, size)))) == parts


def test_unknown_event_types_and_empty_parts_are_skipped(boto_body: Any) -> None:
    frames = (
        encode_payload_part(b"")
        + encode_event("SomethingNew", b"ignored")
        + encode_payload_part(b"kept")
    )
    assert list(iter_payload_parts(boto_body(RawStream(frames)))) == [b"kept"]


@pytest.mark.parametrize("exception", ["ModelStreamError", "InternalStreamFailure"])
def test_in_stream_exception_is_one_terminal_error(exception: str, boto_body: Any) -> None:
    # GIVEN a token, half of the next line, then SageMaker's exception frame
    frames = (
        encode_payload_part(b'data:{"token":{"id":1,"text":"h\xc3\xa9"}}\n\ndata:{"tok')
        + encode_exception(exception, "Model stream broke", error_code="StreamBroken")
        + encode_payload_part(b'en":{"text":"never"}}\n\n')
    )
    raw = RawStream(frames)
    events = list(stream_events(boto_body(raw), "tgi"))
    assert events == [TokenEvent("hé", 1), ErrorEvent("Model stream broke", exception)]
    assert raw.closed


def test_generic_error_frame_uses_its_error_code(boto_body: Any) -> None:
    frames = encode_payload_part(b'{"outputs":["a"]}\n') + encode_error(
        "ThrottlingException", "slow down"
    )
    events = list(stream_events(boto_body(RawStream(frames)), "lmi_jsonlines"))
    assert events == [TokenEvent("a"), ErrorEvent("slow down", "ThrottlingException")]


def test_iter_payload_parts_raises_upstream_error_with_code(boto_body: Any) -> None:
    frames = encode_exception(
        "ModelStreamError", "timed out", error_code="ModelInvocationTimeExceeded"
    )
    with pytest.raises(UpstreamStreamError, match="ModelStreamError: timed out") as caught:
        list(iter_payload_parts(boto_body(RawStream(frames))))
    assert (caught.value.message, caught.value.code) == ("timed out", "ModelStreamError")


def test_error_given_as_an_event_dict_keeps_its_error_code() -> None:
    body: list[dict[str, Any]] = [
        {"PayloadPart": {"Bytes": b'{"outputs":["a"]}\n'}},
        {"ModelStreamError": {"Message": "broken", "ErrorCode": "StreamBroken"}},
    ]
    assert list(stream_events(body)) == [
        TokenEvent("a"),
        ErrorEvent("broken (ErrorCode StreamBroken)", "ModelStreamError"),
    ]


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (
            ReadTimeoutError(cast(Any, None), "/", "Read timed out. (read timeout=60)"),
            "ReadTimeoutError",
        ),
        (ProtocolError("Connection broken: IncompleteRead"), "ProtocolError"),
    ],
)
def test_failed_read_mid_stream_is_one_terminal_error(
    failure: BaseException, code: str, boto_body: Any
) -> None:
    raw = RawStream(encode_payload_part(b'{"outputs":["a"]}\n'), fail=failure)
    events = list(stream_events(boto_body(raw), "lmi_jsonlines"))
    assert events[0] == TokenEvent("a")
    assert isinstance(events[1], ErrorEvent)
    assert events[1].code == code
    assert len(events) == 2
    assert raw.closed


class _OneShotServer:
    """A loopback HTTP server that sends one PayloadPart frame, then fails as told."""

    def __init__(self, failure: str) -> None:
        self.failure = failure
        self.release = threading.Event()  # the stall lasts until the client has timed out
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.socket.getsockname()[1]}"

    def _serve(self) -> None:
        conn, _ = self.socket.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            frame = encode_payload_part(b'{"outputs":["a"]}\n')
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.amazon.eventstream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n%s\r\n" % (len(frame), frame)
            )
            if self.failure == "drop":
                conn.sendall(b"40\r\nabc")  # a chunk cut short, then the connection closes
            else:
                self.release.wait(10)  # silent past the client's read timeout
        self.socket.close()


@pytest.mark.parametrize(
    ("failure", "code"), [("drop", "ProtocolError"), ("stall", "ReadTimeoutError")]
)
def test_real_boto3_client_read_failures_end_in_one_error(failure: str, code: str) -> None:
    # GIVEN a real boto3 client against a server that breaks the stream after one part
    server = _OneShotServer(failure)
    client = boto3.client(
        "sagemaker-runtime",
        region_name="us-east-1",
        endpoint_url=server.url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=botocore.config.Config(read_timeout=0.4, retries={"max_attempts": 0}),
    )
    response = client.invoke_endpoint_with_response_stream(EndpointName="e", Body=b"{}")
    # WHEN the body is parsed THEN the token, then one ErrorEvent naming the failure
    events = list(stream_events(response["Body"], "lmi_jsonlines"))
    assert events[0] == TokenEvent("a")
    assert isinstance(events[1], ErrorEvent)
    assert events[1].code == code
    assert len(events) == 2
    server.release.set()
    server.thread.join(timeout=5)  # the server is done: nothing leaks into other tests


# -- closing the upstream stream ------------------------------------------------------------


def long_stream(tokens: int = 1000) -> bytes:
    return frames_for(b'{"outputs":["x"]}\n' * tokens)


def test_consumer_stopping_early_closes_the_body(boto_body: Any) -> None:
    raw = RawStream(long_stream())
    events = stream_events(boto_body(raw), "lmi_jsonlines")
    assert next(events) == TokenEvent("x")
    events.close()  # the HTTP client went away
    assert raw.closed
    assert raw.reads < len(raw.data) // raw.chunk


def test_dropping_the_generator_closes_the_body(boto_body: Any) -> None:
    raw = RawStream(long_stream())
    for _event in stream_events(boto_body(raw), "lmi_jsonlines"):
        break
    assert raw.closed  # CPython finalises the abandoned generators at once


def test_close_before_the_first_event_still_closes_the_body(boto_body: Any) -> None:
    raw = RawStream(long_stream())
    with stream_events(boto_body(raw), "lmi_jsonlines"):
        pass
    assert raw.closed
    assert raw.reads == 0


def test_closing_iter_payload_parts_closes_the_body(boto_body: Any) -> None:
    raw = RawStream(long_stream())
    parts = iter_payload_parts(boto_body(raw))
    next(parts)
    parts.close()
    assert raw.closed


def test_stream_read_to_its_end_is_not_closed_so_the_connection_can_be_reused(
    boto_body: Any,
) -> None:
    raw = RawStream(frames_for(b'{"outputs":["a"]}\n'))
    assert list(stream_events(boto_body(raw), "lmi_jsonlines")) == [TokenEvent("a"), DoneEvent()]
    assert not raw.closed


@pytest.mark.parametrize("chunking", ["1-byte", "random-seed-1"])
def test_terminal_event_before_the_end_closes_the_body(chunking: str, boto_body: Any) -> None:
    # GIVEN a TGI final event (generated_text) followed by more data
    payload = (
        b'data:{"token":{"text":"a"},"generated_text":"a"}\n\ndata:{"token":{"text":"late"}}\n\n'
    )
    frames = b"".join(encode_payload_part(p) for p in CHUNKINGS[chunking](payload))
    raw = RawStream(frames)
    assert list(stream_events(boto_body(raw))) == [TokenEvent("a"), DoneEvent(generated_text="a")]
    assert raw.closed


# -- the Lambda asset stays stdlib-only ------------------------------------------------------


def test_runtime_modules_import_only_the_standard_library() -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import constructs_llm.streaming.runtime.parsing.parser\n"
        "import constructs_llm.streaming.runtime.parsing.sagemaker_stream\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "print(sorted(new - set(sys.stdlib_module_names) - {'constructs_llm'}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
