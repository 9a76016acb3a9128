"""Engine implementations. Create them with the factories of ``constructs_llm.engine.Engine``."""
