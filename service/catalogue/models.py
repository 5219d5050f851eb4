"""What every game's component catalogue shares: the wire base and the scoring rules.

Model docstrings and field descriptions are published as they are (OpenAPI descriptions and
GraphQL type and field descriptions), so they are plain text.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class CatalogueModel(BaseModel):
    """Output models: camelCase on the wire, every field present, frozen."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        json_schema_serialization_defaults_required=True,
        frozen=True,
    )


class ScoringRuleInfo(CatalogueModel):
    """One scoring rule, named as the lines of a final result name it."""

    id: str = Field(
        description="The rule id of the result's breakdown lines (for example buildings or "
        "street:broadway); when prefix is true, the lines are this id followed by a suffix."
    )
    prefix: bool = Field(
        description="True when result lines start with id and go on with a suffix that "
        "names the scored thing (for example district:blue-5)."
    )
    name: str = Field(description="The rule's name, in the document's language.")
    text: str = Field(description="How the rule scores, in the document's language.")
