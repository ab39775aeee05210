//! Python bindings for plait-core: thin wrappers only.

// pyo3 0.22's `#[pyfunction]` expansion converts `PyErr` into itself, which clippy flags.
#![allow(clippy::useless_conversion)]

use pyo3::prelude::*;

mod errors;
mod fluid;
mod models;
mod sim;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Fetch numpy's C API once now: fetched lazily at the first array, an import interrupted
    // by Ctrl-C there would surface as a panic instead of KeyboardInterrupt.
    let _ = numpy::PyArray1::<f64>::zeros_bound(m.py(), 0, false);
    errors::register(m)?;
    sim::register(m)?;
    models::register(m)?;
    fluid::register(m)?;
    Ok(())
}
