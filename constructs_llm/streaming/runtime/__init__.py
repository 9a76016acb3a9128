"""The streaming Lambda's runtime: an OpenAI-compatible HTTP server in front of a SageMaker
endpoint, and the stream parser it uses. Stdlib + boto3 only: this package is the function's
code asset (``run.sh`` starts it; ``__main__.py`` documents how the function is configured).

Its modules are imported by name (``from constructs_llm.streaming.runtime.parser import
parse_stream``); ``constructs_llm.streaming`` re-exports the public ones.
"""
