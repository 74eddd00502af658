"""A profile loaded from configs/: its settings and rule files read, validated and checked together (`load_profile`)."""
from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ..environment import config_dir
from ..errors import ConfigError
from .base import DEFAULT_PROFILE, M
from .rules import AnalysisRules, CategoryRules, Glossary, Normalisation, RouteTable, _check_regex
from .settings import Settings


class Profile(BaseModel):
    """Settings plus the rule files they point to, loaded once."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    settings: Settings
    routes: RouteTable
    categories: CategoryRules
    glossary: Glossary
    normalisation: Normalisation
    analysis: AnalysisRules
    directory: str


def _read_yaml(path: Path) -> object:
    try:
        with path.open(encoding="utf-8") as f:
            return yaml.safe_load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path} is not valid YAML: {e}") from None


def _validate(model: type[BaseModel], data: object, path: Path):
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"{path} does not validate:\n{e}") from None


def load_config_file(model: type[M], path: Path) -> M:
    """Read a YAML config file into a strict model; every problem is a ConfigError naming the file."""
    return _validate(model, _read_yaml(path), path)


def load_profile(profile: str = DEFAULT_PROFILE, directory: str | Path | None = None) -> Profile:
    """Load `configs/<profile>.yaml` and the routes, categories and glossaries it names."""
    base = Path(directory) if directory else config_dir()
    path = base / f"{profile}.yaml"
    if not path.exists():
        available = sorted(p.stem for p in base.glob("*.yaml") if _is_profile(p))
        raise ConfigError(f"no profile {profile!r} in {base} (available: {', '.join(available) or 'none'})")
    settings = _validate(Settings, _read_yaml(path), path)
    files = settings.files
    routes = _validate(RouteTable, _read_yaml(base / files.routes), base / files.routes)
    categories = _validate(CategoryRules, _read_yaml(base / files.categories), base / files.categories)
    for r in (*routes.routes, routes.default):
        missing = set(r.required) - set(categories.categories)
        if missing:
            raise ConfigError(f"route {r.name!r} requires unknown categories {sorted(missing)}")
        for p in r.match:
            _check_regex(p, f"route {r.name!r}")
    for name, rule in categories.categories.items():
        for p in (*rule.patterns, *rule.headings):
            _check_regex(p, f"category {name!r}")
    return Profile(
        settings=settings,
        routes=routes,
        categories=categories,
        glossary=_validate(Glossary, _read_yaml(base / files.glossary), base / files.glossary),
        normalisation=_validate(Normalisation, _read_yaml(base / files.normalisation), base / files.normalisation),
        analysis=_validate(AnalysisRules, _read_yaml(base / files.analysis), base / files.analysis),
        directory=str(base),
    )


def _is_profile(path: Path) -> bool:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "profile" in data
