"""GraphQL types: failures (static), per-game types and match types (built from the engines)."""
