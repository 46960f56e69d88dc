"""Benchmarks of Lodge (``make bench``); not part of the tests."""
