"""Beam-native entry points: ``python -m pipelines.<name> --help`` (standard Beam options too)."""
