//! Python bindings for plait-core: thin wrappers only.

// pyo3 0.22's `#[pyfunction]` expansion converts `PyErr` into itself, which clippy flags.
#![allow(clippy::useless_conversion)]

use pyo3::prelude::*;

mod errors;
mod fluid;
mod models;
mod sim;

/// Fetches numpy's C API now. Fetched lazily at the first array instead, an import interrupted
/// by Ctrl-C there would surface as a panic rather than KeyboardInterrupt. (Not done when the
/// module loads, so that `plait bench` measures the simulator without numpy.)
#[pyfunction]
fn prepare_numpy(py: Python<'_>) {
    let _ = numpy::PyArray1::<f64>::zeros_bound(py, 0, false);
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("__core_id__", plait_core::SOURCE_ID)?;
    errors::register(m)?;
    sim::register(m)?;
    models::register(m)?;
    fluid::register(m)?;
    m.add_function(wrap_pyfunction!(prepare_numpy, m)?)?;
    Ok(())
}
