"""``RootFieldLimit``: at most ``MAX_ROOT_FIELDS`` root fields per operation.

Depth, alias and token limits bound the size of a document, but not the work it asks for:
each root field is a store read or write of its own (``match``, ``log`` -- a replay from the
seed --, ``act``, ``createMatch`` ...), so twenty aliases of ``log`` cost twenty replays,
and twenty of ``act`` twenty writes behind one request (and one rate-limit count). This rule
counts the operation's root fields as they execute: by response key (fields of the same key
merge into one), through fragment spreads and inline fragments, introspection
(``__typename``, ``__schema``, ``__type``) excluded.
"""

from __future__ import annotations

from typing import Any, Final

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationRule,
)

MAX_ROOT_FIELDS: Final = 5
"""Root fields (store reads or writes) one operation may ask for."""


def root_keys(selection_set: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode],
              seen: set[str] | None = None) -> set[str]:
    """The response keys of the root fields ``selection_set`` executes."""
    seen = set() if seen is None else seen
    keys: set[str] = set()
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            if not selection.name.value.startswith("__"):
                keys.add((selection.alias or selection.name).value)
        elif isinstance(selection, InlineFragmentNode):
            keys |= root_keys(selection.selection_set, fragments, seen)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = fragments.get(name)
            if fragment is not None and name not in seen:  # unknown or cyclic: other rules
                seen.add(name)
                keys |= root_keys(fragment.selection_set, fragments, seen)
    return keys


class RootFieldLimit(ValidationRule):
    def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> None:
        fragments = {
            d.name.value: d for d in self.context.document.definitions
            if isinstance(d, FragmentDefinitionNode)
        }
        count = len(root_keys(node.selection_set, fragments))
        if count > MAX_ROOT_FIELDS:
            name = node.name.value if node.name else "anonymous"
            self.report_error(GraphQLError(
                f"'{name}' asks for {count} root fields. Allowed: {MAX_ROOT_FIELDS}", node
            ))
