"""Sizing: the memory plan of one model copy (weights, KV cache, batch tokens), what a copy
reserves on an instance, and the start-up timeouts that follow from the model's size."""
