//! Arbitrary text through the scenario parser (TOML, JSON, `--set` overrides) and the builder.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| plait_core::fuzzing::scenario_parse(data));
