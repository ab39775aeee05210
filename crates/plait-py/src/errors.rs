//! Mapping of plait-core errors to Python exceptions.

use plait_core::scenario::ScenarioError;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    _core,
    PlaitScenarioError,
    PyValueError,
    "A scenario mistake: the message names the file, the field path and what was expected."
);

create_exception!(
    _core,
    ResourceLimitError,
    PyValueError,
    "A run would need more memory than allowed; the message says why and how to allow it."
);

/// A `ResourceLimitError` whose message starts with the scenario's file.
pub fn resource_error(file: &str, message: &str) -> PyErr {
    ResourceLimitError::new_err(format!("{file}: {message}"))
}

/// A Python `ScenarioError` carrying `file`, `path` (the field) and `detail` (what was
/// expected) attributes; `str(e)` is the whole message.
pub fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let err = PlaitScenarioError::new_err(e.to_string());
    let value = err.value_bound(py);
    let _ = value.setattr("file", e.file.clone());
    let _ = value.setattr("path", e.path.clone());
    let _ = value.setattr("detail", e.message.clone());
    err
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "ScenarioError",
        m.py().get_type_bound::<PlaitScenarioError>(),
    )?;
    m.add(
        "ResourceLimitError",
        m.py().get_type_bound::<ResourceLimitError>(),
    )?;
    Ok(())
}
