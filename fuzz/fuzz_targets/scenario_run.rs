//! Small valid scenarios drawn from the input, run for a bounded number of events, with the
//! run's invariants checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    plait_core::fuzzing::scenario_run(data);
});
