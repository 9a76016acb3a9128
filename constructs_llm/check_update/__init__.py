"""``check_update``: what CloudFormation and SageMaker will do when a stack goes from one
template to another, endpoint by endpoint and component by component, before ``cdk deploy``.

```python
from constructs_llm.check_update import check_update, read_template

old = read_template("deployed.template.json")
found = check_update(old, read_template("cdk.out/ChatStack.template.json"))
refused = [f for f in found if f.refused]
```

``python -m constructs_llm.check_update OLD.template.json NEW.template.json`` prints the same
findings and exits 0 when every change deploys, 1 when one would be refused, 2 on bad input;
``--stack NAME`` reads OLD from the deployed stack (CloudFormation GetTemplate, with the
caller's credentials). The rules, each with its source, are ``constructs_llm.updates.rules``.
What the check cannot see: what is deployed beyond the template (the instance counts autoscaling
has set, the account's quotas), and anything SageMaker refuses that no rule states.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from constructs_llm.updates.template_diff import Template, TemplateError
from constructs_llm.updates.verdicts import Finding, Verdict, findings

__all__ = ["Finding", "Template", "TemplateError", "Verdict", "check_update", "read_template"]


def check_update(old: Template, new: Template) -> list[Finding]:
    """What a deploy from ``old`` (the deployed template) to ``new`` (the synthesized one)
    does: one :class:`Finding` per endpoint and component of either template (and per
    scalable target that changes), each with its :class:`Verdict` (unchanged, updated in
    place, blue/green, rolling, a new endpoint, new copies, created, deleted, or refused), the
    rule it rests on (``constructs_llm.updates.rules``) with its citation, what runs meanwhile,
    and whether anything stops serving. A value: nothing is printed or called."""
    return findings(old, new)


def read_template(path: str | Path) -> Template:
    """The template in the JSON file ``path``, or a :class:`TemplateError` naming the file:
    missing, unreadable, not JSON, or not a CloudFormation template."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TemplateError(source, "no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TemplateError(source, f"cannot be read ({error})") from None
    return parse_template(text, source)


def parse_template(text: str | dict[str, Any], source: str) -> Template:
    """The template in ``text`` (JSON, or already parsed, as boto3 returns a deployed JSON
    template), or a :class:`TemplateError` naming ``source``."""
    if isinstance(text, str):
        try:
            document: object = json.loads(text)
        except json.JSONDecodeError as error:
            raise TemplateError(
                source,
                f"not JSON ({error.msg} at line {error.lineno}, column {error.colno}); "
                "give the template cdk synth writes (cdk.out/<stack>.template.json)",
            ) from None
    else:
        document = text
    return Template.of(document, source)
