"""Loading and saving settings: defaults < `<workspace>/settings.toml` < env `RAGBENCH_*` <
per-call overrides.

`load_settings` layers the sources with pydantic-settings (`_SettingsLoader`: its per-call
overrides, an env source with the `RAGBENCH_` prefix, `OPENAI_BASE_URL`/`OPENAI_API_KEY` as
fallbacks, and a TOML source for the workspace file) and returns a plain `Settings`. Every
problem is one `SettingsError` line naming where the bad value came from (variable, file or
override) and the valid values. `read_settings_file` and `save_settings` read and write the
workspace's settings.toml.
"""

from __future__ import annotations

import re
import tomllib
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import tomli_w
from annotated_types import Ge, Gt, Le, Lt
from pydantic import ValidationError
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from ragbench.config.settings import Settings, redact_url
from ragbench.errors import SettingsError
from ragbench.fileio import write_atomic

SETTINGS_FILE = "settings.toml"
ENV_PREFIX = "RAGBENCH_"
BOOL_WORDS = "true/false, yes/no, on/off or 1/0"


class _WorkspaceTomlSource(TomlConfigSettingsSource):
    """`<workspace>/settings.toml` (absent file: no values), read strictly.

    Errors name the file: not UTF-8, not TOML (with the line), or a key that is no setting.
    """

    def _read_file(self, path: Any) -> dict[str, Any]:
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            raise SettingsError(
                f"{path} is not UTF-8 text (byte {e.start}): save it as UTF-8"
            ) from e
        except OSError as e:
            raise SettingsError(f"{path} cannot be read: {e}") from e
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SettingsError(f"{path} is not valid TOML, {_toml_error_place(e, text)}") from e
        unknown = sorted(set(data) - set(Settings.model_fields))
        if unknown:
            raise SettingsError(
                f"{path}: unknown setting(s) {unknown}; valid: {sorted(Settings.model_fields)}"
            )
        return data


def _toml_error_place(error: tomllib.TOMLDecodeError, text: str) -> str:
    """`line N: reason` for a TOML error (Python 3.11 gives the place only in the message)."""
    message = str(error)
    found = re.search(r" \(at line (\d+), column (\d+)\)$", message)
    if found:
        reason = message[: found.start()]
        return f"line {found.group(1)}, column {found.group(2)}: {reason}"
    reason = message.removesuffix(" (at end of document)")
    return f"line {max(1, len(text.splitlines()))} (end of file): {reason}"


class _OpenAIEnvFields(BaseSettings):
    """The two settings OpenAI clients read from the environment.

    No prefix: the field `openai_base_url` is the variable `OPENAI_BASE_URL`.
    """

    openai_base_url: str = ""
    openai_api_key: str = ""


class _OpenAIEnvSource(EnvSettingsSource):
    """`OPENAI_BASE_URL` / `OPENAI_API_KEY` (empty values ignored).

    It sits below the `RAGBENCH_` source, so it is only a fallback. It reads the fields of
    `_OpenAIEnvFields`, not of the loader: no other setting is taken from unprefixed names.
    """

    def __init__(self) -> None:
        super().__init__(_OpenAIEnvFields, env_prefix="", env_ignore_empty=True)


@dataclass
class _Load:
    """One `load_settings` call: the file the sources hook reads, and the sources it built."""

    settings_file: Path
    sources: tuple[PydanticBaseSettingsSource, ...] = field(default=())


_LOAD: ContextVar[_Load | None] = ContextVar("ragbench_settings_load", default=None)


class _SettingsLoader(BaseSettings, Settings):
    """`Settings` fields and validators, filled from the layered sources (`load_settings` only).

    Highest priority first: per-call overrides (init kwargs), `RAGBENCH_<FIELD>` variables,
    `OPENAI_BASE_URL`/`OPENAI_API_KEY`, the workspace's settings.toml; then the defaults.
    No dotenv or secrets files.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, case_sensitive=False, extra="ignore", validate_default=False
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The four layers; the file is the one `load_settings` set for this call."""
        load = _LOAD.get()
        if load is None:
            raise SettingsError("_SettingsLoader is built by load_settings(workspace) only")
        load.sources = (
            init_settings,
            env_settings,
            _OpenAIEnvSource(),
            _WorkspaceTomlSource(settings_cls, toml_file=load.settings_file),
        )
        return load.sources


def read_settings_file(workspace: str | Path) -> dict[str, Any]:
    """The values saved in the workspace's settings.toml (empty when there is none)."""
    path = Path(workspace) / SETTINGS_FILE
    return dict(_WorkspaceTomlSource(_SettingsLoader, toml_file=path).toml_data)


def load_settings(workspace: str | Path, **overrides: Any) -> Settings:
    """Settings for `workspace`, layered defaults < file < env < `overrides` (None: not set)."""
    unknown = sorted(set(overrides) - set(Settings.model_fields))
    if unknown:
        raise SettingsError(
            f"unknown setting override(s) {unknown}; valid: {sorted(Settings.model_fields)}"
        )
    given = {k: v for k, v in overrides.items() if v is not None}
    load = _Load(Path(workspace) / SETTINGS_FILE)
    token = _LOAD.set(load)
    try:
        loaded = _SettingsLoader(**given)
    except ValidationError as e:
        layers = load.sources[0].settings_sources_data if load.sources else {}
        problems = "; ".join(_describe(err, layers, load.settings_file) for err in e.errors())
        raise SettingsError(f"invalid settings: {problems}") from e
    finally:
        _LOAD.reset(token)
    # a plain Settings, holding (as set) the values some layer gave
    return Settings(**{name: getattr(loaded, name) for name in loaded.model_fields_set})


def _origin(name: str, layers: dict[str, dict[str, Any]], path: Path) -> str:
    """Where the value of field `name` came from: the highest layer that set it."""
    for layer, values in layers.items():  # in priority order, highest first
        if name not in values:
            continue
        if layer == "InitSettingsSource":
            return f"override {name}"
        if layer == "EnvSettingsSource":
            return ENV_PREFIX + name.upper()
        if layer == "_OpenAIEnvSource":
            return name.upper()
        if layer == "_WorkspaceTomlSource":
            return f"{path}: {name}"
    return name


def _bounds(name: str) -> str:
    """The allowed range of a numeric field, e.g. `32 <= chunk_size <= 8192`."""
    low = high = ""
    for rule in Settings.model_fields[name].metadata:
        if isinstance(rule, Ge):
            low = f"{rule.ge} <= "
        elif isinstance(rule, Gt):
            low = f"{rule.gt} < "
        elif isinstance(rule, Le):
            high = f" <= {rule.le}"
        elif isinstance(rule, Lt):
            high = f" < {rule.lt}"
    return f"{low}{name}{high}"


def _describe(err: ErrorDetails, layers: dict[str, dict[str, Any]], path: Path) -> str:
    """One validation error as `<origin>=<value> <problem>; valid: <choices>`."""
    loc = err["loc"]
    message = err["msg"].removeprefix("Value error, ")
    if not loc or loc[0] not in Settings.model_fields:
        return message  # a rule over several fields; its message names them
    name = str(loc[0])
    shown = ("***" if name == "openai_api_key" else repr(redact_url(err["input"]))
             if name in ("openai_base_url", "database_url") and isinstance(err["input"], str)
             else repr(err["input"]))
    kind = err["type"]
    if kind.endswith("_from_bool"):
        what = "a whole number" if kind.startswith("int_") else "a number"
        problem = f"is a boolean, not {what}; valid: {_bounds(name)}"
    elif kind.startswith("bool_"):
        problem = f"is not a valid boolean; use {BOOL_WORDS}"
    elif kind.startswith("int_"):
        problem = f"is not a whole number; valid: {_bounds(name)}"
    elif kind.startswith("float_"):
        problem = f"is not a number; valid: {_bounds(name)}"
    elif kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        problem = f"is out of range; valid: {_bounds(name)}"
    elif kind == "literal_error":
        choices = get_args(Settings.model_fields[name].annotation)
        problem = f"is not a valid choice; valid: {', '.join(map(str, choices))}"
    else:
        problem = f"is invalid: {message}"
    return f"{_origin(name, layers, path)}={shown} {problem}"


def _toml_value(value: Any) -> Any:
    """A setting as TOML can hold it (paths, enums and other objects as their text)."""
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_toml_value(v) for v in value]
    return str(value)


def save_settings(workspace: str | Path, settings: Settings) -> Path:
    """Write the settings that differ from the defaults to settings.toml (never the API key)."""
    path = Path(workspace) / SETTINGS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    defaults = Settings()
    changed = {name: _toml_value(getattr(settings, name)) for name in Settings.model_fields
               if name != "openai_api_key"
               and getattr(settings, name) != getattr(defaults, name)}
    write_atomic(path, "# ragbench settings; see docs/settings.md for every key.\n"
                 + tomli_w.dumps(changed))
    return path
