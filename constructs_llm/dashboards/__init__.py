"""Dashboards: ``LlmDashboard`` and its console address. Above every construct they show: a
dashboard reads endpoints, components and invokers, and none of them reads it."""
