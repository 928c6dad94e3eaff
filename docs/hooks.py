"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks: [docs/hooks.py]``).

- The notebooks stay in ``notebooks/``, outside ``docs/``: each is added to the site as
  ``notebooks/NAME.ipynb``, a page that mkdocs-jupyter executes (their small default slices) in
  ``notebooks/``, where they find ``../shared/traces`` as they do under the tests.
- A notebook page without a single image is a warning, so ``mkdocs build --strict`` fails on it.
- The example report is ``cloudbroker report`` on the generated workload, built with the site
  (``example-report/``, linked from ``report.md``).
- The API reference is generated from the packages' modules (one page per package, every public
  module on it, found at build time); ``docs/tools/griffe_sphinx.py`` reads the docstrings'
  Sphinx habits (``#:`` attribute comments, ``:func:`x``` roles).
"""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

log = get_plugin_logger("cloudbroker-docs")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

#: API page (under ``api/``) -> package; each public module of the package is on it.
API_PAGES = {
    "coh": "broker.coh",
    "planning": "broker.planning",
    "hybrid": "broker.hybrid",
    "cloudcluster": "broker.cloudcluster",
    "advisor": "broker.advisor",
    "elastic": "broker.elastic",
    "spot": "broker.spot",
    "sim": "broker.sim",
    "pricing": "broker.pricing",
    "report": "broker.report",
    "workloads": "workloads",
    "heuristics": "heuristics",
    "solvers": "solvers",
}
#: Modules of ``broker`` itself, outside its subpackages (``broker/cli`` is the command, not an API).
BROKER_MODULES = ("broker.sweep", "broker.orphan", "broker.envs")

@event_priority(100)  # before mkdocs-jupyter wraps the notebook files
def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the notebooks and the generated API pages to the site's files."""
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        # A plain File under the repository root (not File.generated): mkdocs-jupyter's wrapper
        # finds the notebook through its src_dir.
        files.append(File(f"notebooks/{path.name}", src_dir=str(ROOT), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    files.append(File.generated(config, "api/broker.md", content=broker_page()))
    for page, package in API_PAGES.items():
        files.append(File.generated(config, f"api/{page}.md", content=package_page(package)))
    title = ", ".join(f"`{module}`" for module in BROKER_MODULES)
    files.append(File.generated(config, "api/sweep.md", content=module_page(title, BROKER_MODULES)))
    for name, content in example_report().items():
        files.append(File.generated(config, f"example-report/{name}", content=content))
    return files


def example_report() -> dict[str, bytes]:
    """The files of ``cloudbroker report`` on the generated workload (seed 0), by path inside the report."""
    from broker.report import ReportConfig, build_report  # the project, imported when the site is built

    with tempfile.TemporaryDirectory(prefix="cloudbroker-report-") as folder:
        out = Path(folder)
        build_report(ReportConfig(seed=0), out)
        return {path.relative_to(out).as_posix(): path.read_bytes()
                for path in sorted(out.rglob("*")) if path.is_file()}


def public_modules(package: str) -> list[str]:
    """The dotted names of ``package``'s public modules, then its subpackages' (not ``_private`` ones)."""
    directory = ROOT.joinpath(*package.split("."))
    modules = [f"{package}.{p.stem}" for p in sorted(directory.glob("*.py")) if not p.name.startswith("_")]
    for sub in sorted(p.parent for p in directory.glob("*/__init__.py")):
        if not sub.name.startswith("_"):
            modules += [f"{package}.{sub.name}", *public_modules(f"{package}.{sub.name}")]
    return modules


def package_page(package: str) -> str:
    """A package's reference: its docstring, then every public module."""
    blocks = [f"# `{package}`", f"::: {package}\n    options:\n      show_root_heading: false\n      members: false"]
    blocks += [f"::: {module}" for module in public_modules(package)]
    return "\n\n".join(blocks) + "\n"


def module_page(title: str, modules: tuple[str, ...]) -> str:
    """A page of the named modules."""
    return "\n\n".join([f"# {title}", *(f"::: {module}" for module in modules)]) + "\n"


def broker_exports() -> dict[str, str]:
    """``broker``'s public names -> the module that defines each (its ``_EXPORTS``), read without importing it."""
    tree = ast.parse((ROOT / "broker" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
            exports: dict[str, str] = ast.literal_eval(node.value)
            return exports
    raise ValueError("broker/__init__.py has no _EXPORTS")


def broker_page() -> str:
    """``broker``'s docstring and a table of its public names, each linked to its reference."""
    rows = [f"| [`{name}`][{module}.{name}] | [`{module}`][{module}] |"
            for name, module in sorted(broker_exports().items(), key=lambda item: (item[1], item[0]))]
    return "\n".join([
        "# `broker`: the public API", "",
        "::: broker\n    options:\n      show_root_heading: false\n      members: false", "",
        "## Every name `broker` exports", "",
        "`from broker import NAME` gives the object defined in the module beside it.", "",
        "| name | defined in |", "|---|---|", *rows, "",
    ])


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Warn on a notebook page without images (``--strict`` then fails)."""
    src = page.file.src_uri
    if src.startswith("notebooks/") and src.endswith(".ipynb"):
        images = html.count("<img")
        if images == 0:
            log.warning("%s rendered without any figure", src)
        else:
            log.info("%s: %d figures", src, images)
    return html
