"""The state model: the shared JSON document of a run, messages, and the records of runs."""
