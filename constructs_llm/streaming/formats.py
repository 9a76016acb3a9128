"""The shared vocabulary, ``constructs_llm/contract.py``, under the name the runtime imports it
by (``..formats``). In the Lambda's code asset ``streaming`` is the top-level package (the
function's handler is ``runtime/run.sh`` under ``streaming/``, the batch worker's
``streaming.runtime.batches.worker.handle``) and ``contract.py`` a module of its own at the
asset's root, beside it; in the library it is ``constructs_llm.contract``. Nothing else is
defined here, and the construct layer imports ``constructs_llm.contract`` itself."""

from __future__ import annotations

if __package__ == "streaming":  # the code asset, or runtime/run.sh in a checkout
    from contract import *  # type: ignore[import-not-found,no-redef]  # noqa: F403
else:
    from constructs_llm.contract import *  # noqa: F403
