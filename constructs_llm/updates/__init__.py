"""Update behaviour: what CloudFormation and SageMaker do with a change to each property of the
hosting resources, as data with a citation per rule (``rules.py``), and the comparison of two
templates that ``python -m constructs_llm.check_update`` runs over them (``template_diff.py``,
``verdicts.py``)."""
