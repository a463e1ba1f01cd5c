"""GroundingME's task taxonomy (paper Sec. 3.3.1, Table 3): L-1 categories and L-2 subcategories."""

from __future__ import annotations

from typing import Any

from lensbench.core.errors import DataError

__all__ = ["L1_ORDER", "L2_ORDER", "L1_ABBR", "L2_ABBR", "canonical_l1", "canonical_l2"]

#: L-1 categories in the paper's table order (Sec. 3.3.1, Table 3).
L1_ORDER: tuple[str, ...] = ("Discriminative", "Spatial", "Limited", "Rejection")
#: L-2 subcategories per L-1 in Table 3's column order.
L2_ORDER: dict[str, tuple[str, ...]] = {
    "Discriminative": ("Appearance", "Component", "Text", "State"),
    "Spatial": ("Relationship", "Counting"),
    "Limited": ("Occlusion", "Small"),
    "Rejection": ("Appearance", "Component", "Text", "State"),
}
#: Column abbreviations of Table 3 / Table 8.
L2_ABBR = {"Appearance": "App.", "Component": "Cmp.", "Text": "Txt.", "State": "Sta.", "Relationship": "Rel.",
           "Counting": "Cnt.", "Occlusion": "Occ.", "Small": "Sml."}
L1_ABBR = {"Discriminative": "Dis.", "Spatial": "Spa.", "Limited": "Lim.", "Rejection": "Rej."}
# Spellings seen in releases and the paper's text (Sec. 3.2.3 says "Partial" for Occlusion).
_L2_ALIASES = {"relation": "Relationship", "relational": "Relationship", "relations": "Relationship",
               "count": "Counting", "partial": "Occlusion", "occluded": "Occlusion", "tiny": "Small",
               "appear": "Appearance", "components": "Component", "status": "State"}


def canonical_l1(value: Any, path: Any = "?", field_name: str = "subtask_l1") -> str:
    """The L-1 name in :data:`L1_ORDER` for ``value`` (case-insensitive).

    Raises:
        DataError: naming ``path`` and the field for an unknown category.
    """
    s = str(value or "").strip()
    for name in L1_ORDER:
        if s.lower() == name.lower():
            return name
    raise DataError(path, f"unknown L-1 category {value!r} (expected one of {', '.join(L1_ORDER)})", field=field_name)


def canonical_l2(l1: str, value: Any) -> str:
    """The L-2 name for ``value`` under ``l1``: strips an ``"<L1>_"`` prefix, maps known aliases,
    matches Table 3's names case-insensitively; unknown names are kept as given (stripped)."""
    s = str(value or "").strip()
    if s.lower().startswith(l1.lower() + "_"):
        s = s[len(l1) + 1:]
    low = s.lower()
    for name in L2_ORDER.get(l1, ()):
        if low == name.lower():
            return name
    return _L2_ALIASES.get(low, s)
