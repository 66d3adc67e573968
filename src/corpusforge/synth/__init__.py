"""Synthetic source archives with an exact ground truth, for tests and benchmarks.

``twitter`` writes Archive Team twitterstream archives (``write_synthetic_archive``); the
other modules are its steps, listed in its docstring.
"""
