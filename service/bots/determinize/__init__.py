"""Per-game determinizers: a full engine state consistent with what one seat can see.

``determinize(engine, view, seat, rng, legal)`` takes the seat's view (``engine.view(state,
seat)``) and its legal moves -- never the real state -- and fills in the hidden parts (the
order of the future market, opponents' hands, ...) by sampling from the unseen components with
``rng``. The result is a state the engine accepts and whose view for ``seat`` equals ``view``
(the consistency property the tests check).
"""
