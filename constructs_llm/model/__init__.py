"""The model: ``LlmModel`` (a definition), where its weights come from, and
its binding to a placement (the SageMaker Model resource rendered for one hardware)."""
