"""Core's conformance suite (see conftest.py): a package, so its file names may repeat others'."""
