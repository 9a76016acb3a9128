"""A ``multipart/form-data`` body (RFC 7578), as the OpenAI SDKs upload files, parsed with the
standard library's MIME parser. Stdlib only: this file ships in the Lambda asset."""

from __future__ import annotations

from dataclasses import dataclass
from email import policy
from email.parser import BytesParser

from ..http.errors import RequestError


@dataclass(frozen=True, kw_only=True)
class FormPart:
    """One field of the form: its name, its filename (a file field) and its bytes."""

    name: str
    filename: str | None
    data: bytes


def parse_form(content_type: str | None, body: bytes) -> dict[str, FormPart]:
    """The form's fields by name; a 400 when the body is not ``multipart/form-data``."""
    if not content_type or not content_type.lower().startswith("multipart/form-data"):
        raise RequestError(
            f"a file upload is multipart/form-data, got Content-Type {content_type!r}; send "
            "the file in a 'file' field and 'purpose' beside it",
            param="file",
        )
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    if not message.is_multipart():
        raise RequestError("the multipart/form-data body has no parts", param="file")
    fields: dict[str, FormPart] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        fields[name] = FormPart(
            name=name,
            filename=part.get_filename(),
            data=payload if isinstance(payload, bytes) else b"",
        )
    return fields
