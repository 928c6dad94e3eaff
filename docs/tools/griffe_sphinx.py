"""A Griffe extension of the documentation build: the code's Sphinx habits, read for mkdocstrings.

- ``#:`` comment lines just above an assignment document module and class attributes
  (``#: Every CoH policy by name ...`` above ``COH_POLICIES = ...``). Griffe reads only string
  docstrings, so without this the registries and constants would be left out of the reference.
- Roles such as ``:func:`simulate``` or ``:class:`~heuristics.fleet.Plan``` become links: the name
  is resolved in the scope of the object whose docstring holds it (so ``simulate`` in
  ``broker.coh.config`` finds what that module imports), and the link is made where the target is
  on the site (an optional cross-reference: plain code otherwise, never a warning).

``mkdocs.yml`` loads it (``mkdocstrings``' ``extensions`` option).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import partial
from typing import Any

from griffe import (
    Alias,
    Attribute,
    Docstring,
    Extension,
    GriffeLoader,
    Inspector,
    Module,
    NameResolutionError,
    Object,
    ObjectNode,
    Visitor,
)

ROLE = re.compile(r":(?:mod|func|class|meth|attr|data|exc|obj):`(~?)([\w.]+)(\(\))?`")


class SphinxDocstrings(Extension):
    """``#:`` comments as attribute docstrings; Sphinx roles as optional cross-references."""

    def on_attribute_instance(self, *, node: ast.AST | ObjectNode, attr: Attribute, agent: Visitor | Inspector,
                              **kwargs: Any) -> None:
        """Give an attribute without a docstring the ``#:`` comment lines just above it."""
        if attr.docstring is not None or not attr.lineno or not isinstance(agent, Visitor):
            return
        lines = agent.code.splitlines()  # the module being visited
        comment: list[str] = []
        index = attr.lineno - 2
        while index >= 0 and lines[index].lstrip().startswith("#:"):
            comment.insert(0, lines[index].lstrip()[2:].strip())
            index -= 1
        if comment:
            attr.docstring = Docstring("\n".join(comment), lineno=index + 2, endlineno=attr.lineno - 1,
                                       parent=attr, parser=agent.docstring_parser,
                                       parser_options=agent.docstring_options)

    def on_package(self, *, pkg: Module, loader: GriffeLoader, **kwargs: Any) -> None:
        """Rewrite the roles of every docstring of the package, once it is loaded."""
        for obj in _walk(pkg):
            if obj.docstring is not None:
                obj.docstring.value = ROLE.sub(partial(_autoref, obj), obj.docstring.value)


def _walk(obj: Object) -> Iterator[Object]:
    yield obj
    for member in obj.members.values():
        if not isinstance(member, Alias):
            yield from _walk(member)


def _autoref(scope: Object, match: re.Match[str]) -> str:
    short, name, call = match.group(1), match.group(2), match.group(3) or ""
    head, _, rest = name.partition(".")
    try:
        target = scope.resolve(head) + (f".{rest}" if rest else "")
    except NameResolutionError:
        target = name
    title = (name.rsplit(".", 1)[-1] if short else name) + call
    return f'<autoref identifier="{target}" optional><code>{title}</code></autoref>'
