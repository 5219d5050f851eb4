"""The web layer: the match service (``service.py``) shared by REST (``rest.py``) and GraphQL
(``graphql/``), with its wire models, errors and seat tokens."""
