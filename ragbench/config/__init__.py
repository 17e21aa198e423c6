"""Settings: defaults < `<workspace>/settings.toml` < env `RAGBENCH_*` < per-call overrides.

`settings` holds the model (`Settings`, every tunable, built from keyword arguments alone) and
the names shared with the rest of ragbench; `loading` layers the sources into a `Settings`
(`load_settings`, with one `SettingsError` line per problem naming where the bad value came
from) and reads and writes the workspace's settings.toml. Code imports these names from
`ragbench.config`.
"""

from ragbench.config.loading import (
    BOOL_WORDS,
    ENV_PREFIX,
    SETTINGS_FILE,
    load_settings,
    read_settings_file,
    save_settings,
)
from ragbench.config.settings import (
    DEFAULT_WORKSPACE,
    EDGE_TYPES,
    INGEST_FIELDS,
    Settings,
    redact_url,
)

__all__ = [
    "BOOL_WORDS", "DEFAULT_WORKSPACE", "EDGE_TYPES", "ENV_PREFIX", "INGEST_FIELDS",
    "SETTINGS_FILE", "Settings", "load_settings", "read_settings_file", "redact_url",
    "save_settings",
]
