"""The contract walks: each walks one interaction AWS must allow through a template (see
``docs/verification.md``, "AWS's contract: walks over the templates")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.contract_walk import Walk
from tests.support.walks.distribution_origin import walk_origins
from tests.support.walks.invoker_access import walk_invokers
from tests.support.walks.model_access import walk_models
from tests.support.walks.scaling_targets import walk_scaling

__all__ = ["WALKS", "walk_invokers", "walk_models", "walk_origins", "walk_scaling"]

#: Every walk: (template name, template) -> the walk's record.
WALKS: tuple[Callable[[str, dict[str, Any]], Walk], ...] = (
    walk_models,
    walk_invokers,
    walk_origins,
    walk_scaling,
)
