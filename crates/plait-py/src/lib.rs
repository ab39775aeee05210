//! Python bindings for plait-core: thin wrappers only.

use pyo3::prelude::*;

mod fluid;
mod models;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    models::register(m)?;
    fluid::register(m)?;
    Ok(())
}
