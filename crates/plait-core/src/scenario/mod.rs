//! Scenarios: the TOML schema, unit parsing, validation with precise errors.
