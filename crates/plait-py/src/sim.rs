//! Running scenarios from Python: the simulation runs in slices with the GIL released, checks
//! for Ctrl-C between slices and reports progress; results come back as columns (numpy arrays
//! for numbers, lists for strings).

use numpy::IntoPyArray;
use plait_core::scenario::{catalog, Scenario};
use plait_core::sim::build;
use plait_core::time::SimTime;
use plait_core::trace::results::{
    DropTable, FlowSeries, FlowTable, LinkSeries, LinkTable, PathSeries, PathTable, PickTable,
    RefusalTable, RunResult,
};
use plait_core::trace::table::{Column, Table};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use plait_core::sim::budget::{trace_overflow_message, MemoryEstimate};

use crate::errors::{resource_error, scenario_error};

/// Slices per run between progress reports and interrupt checks.
const SLICES: u64 = 200;

/// Whether a scenario's `format` is JSON (else TOML); any other name is refused.
fn is_json(format: &str) -> PyResult<bool> {
    match format {
        "toml" => Ok(false),
        "json" => Ok(true),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "unknown scenario format '{other}' (expected toml or json)"
        ))),
    }
}

fn parse(
    py: Python<'_>,
    text: &str,
    source: &str,
    format: &str,
    overrides: &[(String, String)],
) -> PyResult<Scenario> {
    let parsed = if is_json(format)? {
        py.allow_threads(|| Scenario::from_json_str(text, source, overrides))
    } else {
        py.allow_threads(|| Scenario::from_toml_str(text, source, overrides))
    };
    parsed.map_err(|e| scenario_error(py, &e))
}

/// Validates a scenario; returns a short description of it. A scenario whose estimated memory
/// exceeds `max_memory` bytes is refused as `run_scenario` refuses it (ResourceLimitError),
/// before its flows are expanded.
#[pyfunction]
#[pyo3(signature = (text, source, format="toml", overrides=Vec::new(), max_memory=None))]
fn validate_scenario(
    py: Python<'_>,
    text: &str,
    source: &str,
    format: &str,
    overrides: Vec<(String, String)>,
    max_memory: Option<u64>,
) -> PyResult<PyObject> {
    if let Some(limit) = max_memory {
        if let Some(message) = estimate(py, text, source, format, &overrides)?.check(limit) {
            return Err(resource_error(source, &message));
        }
    }
    let s = parse(py, text, source, format, &overrides)?;
    // Building resolves routes, which can fail on its own.
    build(&s, None).map_err(|e| scenario_error(py, &e))?;
    let d = PyDict::new_bound(py);
    d.set_item("nodes", s.nodes.len())?;
    d.set_item("links", s.links.len())?;
    d.set_item("flows", s.flows.len())?;
    d.set_item("duration_s", s.simulation.duration.as_secs_f64())?;
    d.set_item("warmup_s", s.simulation.warmup.as_secs_f64())?;
    d.set_item("seed", s.simulation.seed)?;
    d.set_item("warnings", warning_lines(&s))?;
    Ok(d.into())
}

/// The scenario's warnings, one line each (`file: path: message`).
fn warning_lines(s: &Scenario) -> Vec<String> {
    s.warnings.iter().map(ToString::to_string).collect()
}

/// A table as a dict of columns: numpy arrays for numbers and row indices, lists for text.
/// Row-index columns are also listed under `"__index__"` (column -> table they index), so that
/// Python can turn them into categoricals. The columns come from the table's one definition
/// (`plait_core::trace::table`), so none can be forgotten here.
fn table_to_dict<'py, T: Table>(py: Python<'py>, table: &T) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    let index = PyDict::new_bound(py);
    for (name, column) in table.columns() {
        match column {
            Column::F64(v) => d.set_item(name, v.to_vec().into_pyarray_bound(py))?,
            Column::U64(v) => d.set_item(name, v.to_vec().into_pyarray_bound(py))?,
            Column::Text(v) => d.set_item(name, v.to_vec())?,
            Column::Index { rows, of } => {
                d.set_item(name, rows.to_vec().into_pyarray_bound(py))?;
                index.set_item(name, of)?;
            }
        }
    }
    d.set_item("__index__", index)?;
    Ok(d)
}

fn result_to_dict(py: Python<'_>, r: &RunResult) -> PyResult<PyObject> {
    let out = PyDict::new_bound(py);
    out.set_item("seed", r.seed)?;
    out.set_item("duration_s", r.duration_s)?;
    out.set_item("warmup_s", r.warmup_s)?;
    out.set_item("events", r.events)?;
    out.set_item("delivered_packets", r.delivered_packets)?;
    out.set_item("jain_fairness", r.jain_fairness)?;
    out.set_item(FlowTable::NAME, table_to_dict(py, &r.flows)?)?;
    out.set_item(LinkTable::NAME, table_to_dict(py, &r.links)?)?;
    out.set_item(PathTable::NAME, table_to_dict(py, &r.paths)?)?;
    out.set_item(FlowSeries::NAME, table_to_dict(py, &r.flow_series)?)?;
    out.set_item(LinkSeries::NAME, table_to_dict(py, &r.link_series)?)?;
    out.set_item(PathSeries::NAME, table_to_dict(py, &r.path_series)?)?;
    out.set_item(PickTable::NAME, table_to_dict(py, &r.picks)?)?;
    out.set_item(DropTable::NAME, table_to_dict(py, &r.drops)?)?;
    out.set_item(RefusalTable::NAME, table_to_dict(py, &r.refusals)?)?;
    Ok(out.into())
}

/// Events per slice: between slices the run checks for cancellation and reports progress, so
/// a slice must stay well under a tenth of a second even when simulated time does not advance.
const SLICE_EVENTS: u64 = 200_000;

/// A flag another thread sets to stop a run between slices (Ctrl-C in the calling thread).
#[pyclass(module = "plait._core")]
#[derive(Default)]
struct CancelToken(Arc<AtomicBool>);

#[pymethods]
impl CancelToken {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

fn check_cancelled(py: Python<'_>, cancel: Option<&Arc<AtomicBool>>) -> PyResult<()> {
    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(
            "run cancelled",
        ));
    }
    py.check_signals()
}

/// Runs a scenario. `progress(now_s, duration_s)` is called between slices if given;
/// `cancel` stops the run between slices (raising KeyboardInterrupt); a run whose estimated
/// memory exceeds `max_memory` bytes is refused before it is built (ResourceLimitError).
/// Parsing, building and simulating run with the GIL released.
#[pyfunction]
#[pyo3(signature = (text, source, format="toml", seed=None, overrides=Vec::new(), progress=None, cancel=None, max_memory=None))]
#[allow(clippy::too_many_arguments)]
fn run_scenario(
    py: Python<'_>,
    text: &str,
    source: &str,
    format: &str,
    seed: Option<u64>,
    overrides: Vec<(String, String)>,
    progress: Option<PyObject>,
    cancel: Option<PyRef<'_, CancelToken>>,
    max_memory: Option<u64>,
) -> PyResult<PyObject> {
    let cancel = cancel.map(|c| Arc::clone(&c.0));
    // Rows the traces may hold beside the rest of the run: watched between slices, since
    // their bounds from the rates are far above what responsive flows record.
    let mut trace_rows_allowed = None;
    if let Some(limit) = max_memory {
        // Estimated from the flow entries before `count` is expanded: refusing a run of a
        // million flows must not cost a million flows.
        let e = estimate(py, text, source, format, &overrides)?;
        if let Some(message) = e.check(limit) {
            return Err(resource_error(source, &message));
        }
        trace_rows_allowed = e.trace_row_limit(limit).map(|rows| (rows, limit));
    }
    let scenario = parse(py, text, source, format, &overrides)?;
    check_cancelled(py, cancel.as_ref())?;
    let mut sim = py
        .allow_threads(|| build(&scenario, seed))
        .map_err(|e| scenario_error(py, &e))?;
    check_cancelled(py, cancel.as_ref())?;
    let duration = sim.config().duration;
    let step = (duration.as_nanos() / SLICES).max(1);
    let mut next = SimTime::ZERO;
    loop {
        // A time slice ends at `next`; an event slice may end earlier and is then resumed.
        if sim.now() >= next {
            next = next.saturating_add(SimTime(step)).min(duration);
        }
        let limit = next;
        let done = py.allow_threads(|| sim.run_until_bounded(limit, SLICE_EVENTS));
        check_cancelled(py, cancel.as_ref())?;
        if let Some((allowed, memory)) = trace_rows_allowed {
            let rows = sim.trace_rows();
            if rows > allowed {
                let at_s = sim.now().as_secs_f64();
                return Err(resource_error(
                    source,
                    &trace_overflow_message(rows, at_s, memory),
                ));
            }
        }
        if let Some(cb) = &progress {
            cb.call1(py, (sim.now().as_secs_f64(), duration.as_secs_f64()))?;
        }
        if done {
            break;
        }
    }
    // `&mut` because a shared reference to the simulator is not Send.
    let sim = &mut sim;
    let results = py.allow_threads(move || sim.results());
    check_cancelled(py, cancel.as_ref())?;
    let out = result_to_dict(py, &results)?;
    out.bind(py)
        .set_item("warnings", warning_lines(&scenario))?;
    Ok(out)
}

/// The scenario after `overrides`, validated and built, in canonical form (sorted-key JSON
/// without `[sweep]`): what the sweep runner hashes to key a run's stored result. A scenario
/// whose estimated memory exceeds `max_memory` bytes is neither validated in full nor built
/// (its run is refused where it runs, and recorded as failed): planning a sweep point of a
/// million flows must not make a million flows.
#[pyfunction]
#[pyo3(signature = (text, source, format="toml", overrides=Vec::new(), max_memory=None))]
fn canonical_scenario(
    py: Python<'_>,
    text: &str,
    source: &str,
    format: &str,
    overrides: Vec<(String, String)>,
    max_memory: Option<u64>,
) -> PyResult<String> {
    let json = is_json(format)?;
    if let Some(limit) = max_memory {
        if estimate(py, text, source, format, &overrides)?
            .check(limit)
            .is_some()
        {
            return py
                .allow_threads(|| {
                    Scenario::canonical_json_unchecked(text, source, json, &overrides)
                })
                .map_err(|e| scenario_error(py, &e));
        }
    }
    let (scenario, canonical) = py
        .allow_threads(|| Scenario::canonical_json(text, source, json, &overrides))
        .map_err(|e| scenario_error(py, &e))?;
    build(&scenario, None).map_err(|e| scenario_error(py, &e))?;
    Ok(canonical)
}

/// Estimated memory of a run, in bytes, with what it is made of (see `sim::budget`).
#[pyfunction]
#[pyo3(signature = (text, source, format="toml", overrides=Vec::new()))]
fn estimate_memory(
    py: Python<'_>,
    text: &str,
    source: &str,
    format: &str,
    overrides: Vec<(String, String)>,
) -> PyResult<PyObject> {
    let e = estimate(py, text, source, format, &overrides)?;
    let d = PyDict::new_bound(py);
    d.set_item("bytes", e.bytes)?;
    d.set_item("state_bytes", e.state_bytes())?;
    d.set_item("trace_bytes", e.trace_bytes())?;
    d.set_item("trace_note", e.trace_note())?;
    d.set_item("flows", e.flows)?;
    d.set_item("subflows", e.subflows)?;
    d.set_item("shares", e.shares)?;
    d.set_item("paths", e.paths)?;
    d.set_item("link_directions", e.link_directions)?;
    d.set_item("samples", e.samples)?;
    d.set_item("sample_rows", e.sample_rows)?;
    d.set_item("picks", e.picks)?;
    d.set_item("drops", e.drops)?;
    d.set_item("packets", e.packets)?;
    d.set_item("seconds", e.seconds())?;
    Ok(d.into())
}

/// The memory estimate of a scenario, from its flow entries before `count` is expanded
/// (`Scenario::unexpanded`).
fn estimate(
    py: Python<'_>,
    text: &str,
    source: &str,
    format: &str,
    overrides: &[(String, String)],
) -> PyResult<MemoryEstimate> {
    let json = is_json(format)?;
    let (entries, counts) = py
        .allow_threads(|| Scenario::unexpanded(text, source, json, overrides))
        .map_err(|e| scenario_error(py, &e))?;
    Ok(MemoryEstimate::of_entries(&entries, &counts))
}

/// The controllers, queues, sources and loss models a scenario can name, with parameters.
#[pyfunction]
fn catalog_json() -> PyResult<String> {
    serde_json::to_string(&catalog())
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// Runs the dumbbell benchmark in this process; returns its report as JSON.
#[pyfunction]
#[pyo3(signature = (flows, duration_s, kind = "tcp", exact = false))]
fn bench_dumbbell(
    py: Python<'_>,
    flows: usize,
    duration_s: f64,
    kind: &str,
    exact: bool,
) -> PyResult<String> {
    let report = py
        .allow_threads(|| plait_core::bench::run_dumbbell_kind(flows, duration_s, kind, exact))
        .map_err(|e| scenario_error(py, &e))?;
    serde_json::to_string(&report)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// Runs the MPTCP benchmark in this process; returns its report as JSON.
#[pyfunction]
#[pyo3(signature = (connections, subflows, duration_s, exact = false))]
fn bench_mptcp(
    py: Python<'_>,
    connections: usize,
    subflows: usize,
    duration_s: f64,
    exact: bool,
) -> PyResult<String> {
    let report = py
        .allow_threads(|| plait_core::bench::run_mptcp(connections, subflows, duration_s, exact))
        .map_err(|e| scenario_error(py, &e))?;
    serde_json::to_string(&report)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory, m)?)?;
    m.add(
        "PACKETS_PER_SECOND",
        plait_core::sim::budget::PACKETS_PER_SECOND,
    )?;
    m.add_function(wrap_pyfunction!(canonical_scenario, m)?)?;
    m.add_class::<CancelToken>()?;
    m.add_function(wrap_pyfunction!(catalog_json, m)?)?;
    m.add_function(wrap_pyfunction!(bench_dumbbell, m)?)?;
    m.add_function(wrap_pyfunction!(bench_mptcp, m)?)?;
    Ok(())
}
