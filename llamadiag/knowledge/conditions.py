"""The tests a rule condition may make, named once for the rule model, the engine and the docs.

Kept apart from rulemodel.py so the engine can name them without importing pydantic (the
models are not built on a start-up cache hit)."""

from __future__ import annotations

# a fact compared with another fact (the value is the other fact's name)
FACT_TESTS = ("equals_fact", "not_equals_fact", "at_least_fact", "at_most_fact")

# every test, in the order their words are shown ('in_' is the model's name for `in`)
CONDITION_TESTS = ("equals", "in_", "not_in", "at_least", "at_most", "matches", "exists", *FACT_TESTS, "given")
