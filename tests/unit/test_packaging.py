"""A non-editable install (the k8s image installs saksi so) carries every data file the packages
read at run time: each file under pipeline/ and serve/ that is not Python must be named by
pyproject's [tool.setuptools.package-data], or the wheel would silently leave it out."""
from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_data_file_of_the_packages_is_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    missing = []
    for top in ("pipeline", "serve"):
        for f in (ROOT / top).rglob("*"):
            if not f.is_file() or f.suffix in (".py", ".pyc") or "__pycache__" in f.parts or f.name == "README.md":
                continue
            package_dir = next(p for p in f.parents if (p / "__init__.py").exists())
            package = ".".join(package_dir.relative_to(ROOT).parts)
            rel = f.relative_to(package_dir).as_posix()
            if not any(fnmatch.fnmatch(rel, pat) for pat in data.get(package, [])):
                missing.append(f"{package}: {rel}")
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
    assert "weights/*.json" in data["pipeline.answer_reader"]


def test_the_project_metadata_needs_no_deprecated_form():
    """Set-up stays quiet: `project.license` is an SPDX string (the TOML-table form makes setuptools print a
    deprecation box on every install), and the build backend is recent enough to read it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in project["build-system"]["requires"]
