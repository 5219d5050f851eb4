"""The transports: HTTP and GraphQL translated to the services and back; no rule is decided
here (docs/architecture.md).

REST in ``rest/`` (a module per resource), GraphQL in ``graphql/``; both call the same service
methods (``service.matches``, ``service.players``, ``service.queue``, ``service.tables``,
``service.invitations``, ``service.webhooks``), so they cannot disagree. Beside them: the
OpenAPI document (``openapi.py``) and the problem codes
of each operation (``problem_codes.py``), reading credentials (``credentials.py``), problem
rendering (``problems.py``), request bodies (``bodies.py``), languages (``languages.py``),
rate limits (``rate_limits.py``), trusted proxies (``proxies.py``), request ids
(``request_ids.py``), compression (``compression.py``), the body limit and metrics
(``middleware.py``), credentials kept out of the logs (``logs.py``) and ``skyline serve``'s
uvicorn server (``serving.py``). The wire models, errors and seat tokens live with their
services (``service.matches.models``, ``service.errors``, ``service.identity``)."""
