"""What every LLM call shares, the agent's adapters and the judge's clients alike: the SDK clients and their retry
policy (`clients`) and one price table (`pricing`)."""
