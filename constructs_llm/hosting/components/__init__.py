"""Inference components: the shared endpoint, the model components placed on it, their LoRA
adapters, and copy autoscaling."""
