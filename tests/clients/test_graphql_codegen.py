"""The GraphQL operations that docs/graphql.md shows, as a TypeScript client generates them.

Every fenced ```graphql block of the guide that holds operations (blocks of type definitions,
like the overview of ``Query``/``Mutation``, are skipped) must be valid against the checked-in
``schema.graphql``; GraphQL Code Generator (``typescript`` + ``typescript-operations``) turns
them into types, and ``tsc --strict`` must accept the result.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from graphql import (
    DocumentNode,
    ExecutableDefinitionNode,
    GraphQLError,
    NameNode,
    OperationDefinitionNode,
    build_schema,
    parse,
    print_ast,
    validate,
)

from tests.clients.conftest import HERE, ROOT, SCHEMA_GRAPHQL, NodeTools, run, ts_build

GUIDE = ROOT / "docs" / "graphql.md"
FENCE = re.compile(r"^```graphql[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence in the guide
    text: str
    document: DocumentNode

    def named(self) -> tuple[str, list[str]]:
        """The block with its anonymous operations named after its line (codegen validates
        all documents as one, where an anonymous operation must be the only one), and the
        result types typescript-operations writes for them (``<Name>Query``, ...)."""
        names, definitions = [], []
        for number, definition in enumerate(self.document.definitions):
            if isinstance(definition, OperationDefinitionNode):
                if definition.name is None:
                    name = NameNode(value=f"GraphqlMdLine{self.line}N{number}")
                    definition = dataclasses.replace(definition, name=name)
                assert definition.name is not None
                names.append(definition.name.value + definition.operation.value.title())
            definitions.append(definition)
        return print_ast(dataclasses.replace(self.document, definitions=tuple(definitions))), names


def operation_blocks(markdown: str) -> list[Block]:
    """The guide's ```graphql blocks made only of operations and fragments."""
    blocks = []
    for fence in FENCE.finditer(markdown):
        line = markdown.count("\n", 0, fence.start()) + 1
        try:
            document = parse(fence[1])
        except GraphQLError as error:
            pytest.fail(f"docs/graphql.md line {line}: not GraphQL: {error.message}",
                        pytrace=False)
        kinds = {isinstance(d, ExecutableDefinitionNode) for d in document.definitions}
        if kinds == {True}:
            blocks.append(Block(line, fence[1], document))
        elif kinds != {False}:  # operations mixed with type definitions: neither kind
            pytest.fail(f"docs/graphql.md line {line}: mixes operations and type definitions",
                        pytrace=False)
    return blocks


def test_the_extractor_keeps_operations_and_skips_type_definitions() -> None:
    markdown = (
        "```graphql\ntype Query { a: Int }\n```\n\ntext\n\n"
        "```graphql\n# a comment\nquery($id: ID!) { match(id: $id) { __typename } }\n```\n"
        "```js\nquery { games { id } }\n```\n"
        "```graphql\nmutation M { x }\nfragment F on Game { id }\n```\n"
    )
    blocks = operation_blocks(markdown)
    assert [b.line for b in blocks] == [7, 14]
    assert [len(b.document.definitions) for b in blocks] == [1, 2]


def test_docs_operations_are_valid_and_typed_by_graphql_codegen(
    node_tools: NodeTools, tmp_path: Path
) -> None:
    blocks = operation_blocks(GUIDE.read_text())
    assert len(blocks) >= 3, "docs/graphql.md shows fewer GraphQL operations than it did"
    schema = build_schema(SCHEMA_GRAPHQL.read_text())
    invalid = [f"docs/graphql.md line {b.line}: {e.message}"
               for b in blocks for e in validate(schema, b.document)]
    assert not invalid, "operations in docs/graphql.md invalid against schema.graphql:\n" + \
        "\n".join(invalid)

    operations = tmp_path / "operations"
    operations.mkdir()
    expected = []  # one result type per operation
    for block in blocks:
        text, names = block.named()
        (operations / f"graphql_md_line_{block.line}.graphql").write_text(text)
        expected += [f"export type {name} = " for name in names]
    build = tmp_path / "ts"
    build.mkdir()
    config = tmp_path / "codegen.json"
    common = {
        "strictScalars": True,  # a new custom scalar must be mapped here
        "scalars": {"JSON": "unknown"},
        "useTypeImports": True,
        "enumsAsTypes": True,
        "futureProofEnums": True,  # a server may add enum values the client was not built with
    }
    config.write_text(json.dumps({
        "overwrite": True,
        "schema": str(SCHEMA_GRAPHQL),
        "documents": str(operations / "*.graphql"),
        # typescript-operations 6 writes the enums and inputs an operation uses itself, so
        # the two plugins write one file each (in one file they would declare them twice).
        "generates": {
            str(build / "schema-types.ts"): {"plugins": ["typescript"], "config": common},
            str(build / "operations.ts"): {"plugins": ["typescript-operations"], "config": common},
        },
    }))
    # Run from tests/clients: codegen resolves its plugins from the working folder.
    run([node_tools["graphql-codegen"], "--config", config], cwd=HERE,
        what="graphql-codegen (typescript + typescript-operations)")
    generated = (build / "operations.ts").read_text()
    missing = [line for line in expected if line not in generated]
    assert not missing, f"graphql-codegen wrote no type for: {missing}"
    ts_build(build, [], ["schema-types.ts", "operations.ts"])
    run([node_tools["tsc"], "-p", build / "tsconfig.json", "--noEmit"], cwd=build,
        what="tsc --strict over the generated operation types")
