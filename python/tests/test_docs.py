"""The product's documents describe the product: README stays a user's guide of at most ~250
lines, and no document speaks of how stoker was worked on (work-item numbers, planning
documents that are not in the repository)."""

import glob
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DOCS = ([os.path.join(ROOT, f) for f in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")] +
        glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True) +
        glob.glob(os.path.join(ROOT, "bench", "*.md")))

# What a document of the product must not say: development bookkeeping.
FORBIDDEN = [
    (r"DESIGN\.md", "a design document outside the repository"),
    (r"\b(issue|ticket|work item)s? ?#?\d+", "a work-item number"),
    (r"\bthe [a-z-]+ issue\b|\bthe issue\b", "a work item"),
]


def test_readme_is_a_users_guide_of_at_most_250_lines():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert len(text.splitlines()) <= 250, "README.md: move detail to docs/ (docs/index.md)"
    for section in ("## Installation", "## Quick start", "## Benchmarks", "## Documentation"):
        assert section in text, f"README.md lacks {section}"
    assert text.index("## Installation") < text.index("## Quick start")


def test_documents_speak_of_the_product_not_of_its_development():
    found = []
    for path in DOCS:
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            for pattern, what in FORBIDDEN:
                if re.search(pattern, line, re.IGNORECASE):
                    found.append(f"{os.path.relpath(path, ROOT)}:{n}: {what}: {line.strip()[:80]}")
    assert not found, "\n".join(found)


def test_the_license_is_apache_2():
    text = open(os.path.join(ROOT, "LICENSE"), encoding="utf-8").read()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
