"""Evaluating stored runs, a floor above the store and the scorer: scoring a store's runs with teams' checks, the
verdict cache, and the original-format verdict of record. The store keeps bytes; this room knows what a verdict is."""
