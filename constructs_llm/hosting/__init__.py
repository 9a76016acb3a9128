"""Hosting: endpoints, their production variants, imported endpoints, and inference-component
endpoints with their components (``components/``)."""
