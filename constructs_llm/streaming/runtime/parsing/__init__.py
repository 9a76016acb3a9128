"""The stream parser: an engine's token stream, in whatever parts SageMaker delivers it, as
events (``parser.parse_stream``; the events in ``events.py``). Stdlib only, so the construct
layer's users can import it too (``constructs_llm.streaming.parse_stream``)."""
