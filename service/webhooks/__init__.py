"""Webhooks for apps (issue 18): endpoints an app registers (``endpoints.py``), the events
derived from every stored match version (``payloads.py``), kept and scheduled per delivery
(``outbox.py``), signed as Standard Webhooks (``signing.py``) and sent by a worker
(``service.workers.webhooks``) to addresses the operator allows (``ssrf.py``).
``WebhookService`` (``service.py``) is what REST, GraphQL and the worker call."""

from .service import WebhookService, WebhookSettings

__all__ = ["WebhookService", "WebhookSettings"]
