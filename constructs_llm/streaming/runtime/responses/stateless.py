"""What the Responses API's stateful features get: the gateway stores no response and no
conversation. Stdlib only: this file ships in the Lambda asset."""

from __future__ import annotations

STATELESS = (
    "this gateway keeps no state (it stores no response and no conversation); send the whole "
    "conversation in 'input' on every request, with the earlier output items (messages, "
    "function_call and function_call_output items) included"
)

NO_STORED_RESPONSES = (
    "this gateway stores no responses, so none can be retrieved, cancelled or deleted; "
    "POST /v1/responses is served"
)
