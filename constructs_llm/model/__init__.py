"""The model: ``LlmModel`` (a definition), where its weights come from, its container image, and
its binding to a placement (the SageMaker Model resource rendered for one hardware)."""
