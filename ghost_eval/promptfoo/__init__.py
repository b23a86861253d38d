"""The Promptfoo adapters, kept in the library so `providers/`, `assertions/` and `suites/` stay thin: the providers'
responses and the suite's rows (`adapters`), the light assertion path (`grading`, which calls `adapters`, never the
other way), the metadata keys both read (`keys`), `ghost-eval validate`'s check of a suite folder (`validate`) and
the JSON Schemas editors read (`schemas`)."""
