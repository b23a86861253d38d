"""Benchmarks and measurements, each a script (`python bench/<name>.py`); a package so the tests import the helpers
they share with it (`bench.synthetic_store`, `bench.corpus_agreement`) by name, without touching sys.path."""
