"""mkdocs hook: publish ``benchmarks/results/`` with the docs, and keep the pages' links.

The pages link the results as ``../benchmarks/results/NAME`` (right on GitHub,
where ``docs/`` sits next to ``benchmarks/``). The hook adds every result file
(markdown, PNG, CSV) to the site under ``benchmarks/results/`` and rewrites
those links to that place, so ``mkdocs build --strict`` checks them like any
other link.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
_LINK = re.compile(r"\]\((?:\.\./)+benchmarks/results/")


def on_files(files, config):  # type: ignore[no-untyped-def]
    for path in sorted(RESULTS.glob("*")):
        if path.suffix in (".md", ".png", ".csv", ".svg"):
            files.append(
                File(
                    f"benchmarks/results/{path.name}",
                    src_dir=str(RESULTS.parents[1]),
                    dest_dir=config["site_dir"],
                    use_directory_urls=config["use_directory_urls"],
                )
            )
    return files


def on_page_markdown(markdown, page, config, files):  # type: ignore[no-untyped-def]
    if page.file.src_uri.startswith("benchmarks/"):
        return markdown
    depth = page.file.src_uri.count("/")
    return _LINK.sub("](" + "../" * depth + "benchmarks/results/", markdown)
