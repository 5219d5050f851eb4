"""GraphQL documents shared by the tests (toy game selections)."""

TOY_VIEW = """
  __typename
  ... on ToyView {
    round rounds phase turn hand handSizes hasChosen myChoice deckSize scores lastReveal
  }
"""

STATE = f"""
  matchId game version rulesVersion status seat activeSeats
  view {{ {TOY_VIEW} }}
  result {{ winners seats {{ seat score rank breakdown {{ rule points }} }} }}
"""

PROBLEM = """
  ... on Problem { code message }
  ... on Unavailable { retryAfter }
"""

ACT_PROBLEM = f"""
  {PROBLEM}
  ... on VersionConflict {{ currentVersion }}
  ... on NotYourTurn {{ currentVersion }}
  ... on MatchFinished {{ currentVersion }}
"""

EVENT = "kind ... on UnknownEvent { data: json }"
"""The toy game has no event models: its events are UnknownEvent (kind + JSON data)."""

MOVE = """
  __typename
  ... on ToyDraw { type }
  ... on ToyPass { type }
  ... on ToyPlay { type card }
"""

MATCH = f"""
query($id: ID!) {{
  match(id: $id) {{ __typename ... on MatchState {{ {STATE} }} {PROBLEM} }}
}}
"""

LEGAL_MOVES = f"""
query($id: ID!) {{
  legalMoves(matchId: $id) {{
    __typename
    ... on LegalMoves {{ matchId version seat moves {{ {MOVE} }} }}
    {PROBLEM}
  }}
}}
"""

ACT = f"""
mutation($id: ID!, $action: ActionInput!, $version: Int, $key: String) {{
  act(matchId: $id, action: $action, expectedVersion: $version, idempotencyKey: $key) {{
    __typename
    ... on ActionAccepted {{ matchId version events {{ {EVENT} }} state {{ {STATE} }} }}
    {ACT_PROBLEM}
  }}
}}
"""

LOG = f"""
query($id: ID!, $after: Int! = 0) {{
  log(matchId: $id, after: $after) {{
    __typename
    ... on LogPage {{
      matchId latestVersion
      entries {{ version seat action {{ {MOVE} }} events {{ {EVENT} }} }}
    }}
    {PROBLEM}
  }}
}}
"""

MATCH_UPDATED = f"""
subscription($id: ID!, $after: Int) {{
  matchUpdated(matchId: $id, after: $after) {{
    __typename
    ... on MatchState {{ {STATE} }}
    {PROBLEM}
  }}
}}
"""
