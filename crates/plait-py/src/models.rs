//! Bindings for the closed-form models of `plait_core::model` (PFTK, TFRC, MulTFRC, AIMD/MulTCP,
//! Altman et al., MPFAST).
//!
//! Every elementwise formula takes one-dimensional, contiguous float64 arrays of equal length
//! (the Python layer `plait.models` broadcasts, checks the domain and reshapes) and returns a new
//! array. Units are those of the core functions: seconds, packets, and bytes for segment sizes.

// The `#[pyfunction]` expansion of pyo3 0.22 converts a `PyResult` into itself, which recent
// clippy reports at every function returning one; nothing in this file's own code does that.
#![allow(clippy::useless_conversion)]

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use plait_core::model::{aimd, altman, mpfast, multfrc, pftk, tfrc};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

type Column<'py> = PyReadonlyArray1<'py, f64>;
type Output<'py> = PyResult<Bound<'py, PyArray1<f64>>>;

/// The data of every column; all must have the same length, else `mismatch` is the error.
fn equal_length<'a, const K: usize>(
    columns: &'a [Column<'_>; K],
    mismatch: &'static str,
) -> PyResult<[&'a [f64]; K]> {
    let mut slices: [&[f64]; K] = [&[]; K];
    for (slice, column) in slices.iter_mut().zip(columns) {
        *slice = column.as_slice()?;
    }
    let len = slices.first().map_or(0, |s| s.len());
    if slices.iter().any(|s| s.len() != len) {
        return Err(PyValueError::new_err(mismatch));
    }
    Ok(slices)
}

/// Apply `formula` to the i-th element of every column.
fn elementwise<'py, const K: usize>(
    py: Python<'py>,
    columns: [Column<'py>; K],
    formula: impl Fn([f64; K]) -> f64,
) -> Output<'py> {
    let slices = equal_length(
        &columns,
        "model inputs must have the same length after broadcasting",
    )?;
    let len = slices.first().map_or(0, |s| s.len());
    let values: Vec<f64> = (0..len)
        .map(|i| formula(std::array::from_fn(|k| slices[k][i])))
        .collect();
    Ok(values.into_pyarray_bound(py))
}

/// Defines `#[pyfunction]`s that take one float64 column per argument (the argument names are
/// the Python names) and apply a core formula, called with the arguments in the same order,
/// to each element ([`elementwise`]).
macro_rules! elementwise_functions {
    ($(
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident),+) = $formula:path;
    )+) => {$(
        $(#[$attr])*
        #[pyfunction]
        fn $name<'py>(py: Python<'py>, $($arg: Column<'py>),+) -> Output<'py> {
            elementwise(py, [$($arg),+], |[$($arg),+]| $formula($($arg),+))
        }
    )+};
}

elementwise_functions! {
    /// Full PFTK model, packets/s (`wmax` = inf for no receiver window).
    fn pftk_full_rate(rtt, p, t0, b, wmax) = pftk::full_rate;
    /// PFTK approximation, packets/s.
    fn pftk_approximate_rate(rtt, p, t0, b, wmax) = pftk::approximate_rate;
    /// Square-root law, packets/s.
    fn pftk_square_root_rate(rtt, p, b) = pftk::square_root_rate;
    /// RFC 5348 §3.1 equation, bytes/s for s in bytes.
    fn tfrc_rate(s, rtt, p, t_rto, b) = tfrc::rate;
    /// AIMD mean rate; beta is the decrease fraction.
    fn aimd_rate(alpha, beta_decrease, rtt, p, s) = aimd::rate;
    /// AIMD mean window (packets).
    fn aimd_mean_window(alpha, beta_decrease, p) = aimd::mean_window;
    /// Number of TCP flows an AIMD(alpha, beta_decrease) window is equivalent to.
    fn aimd_equivalent_flows(alpha, beta_decrease) = aimd::equivalent_flows;
    /// Increase alpha equivalent to n flows for a given decrease fraction.
    fn aimd_equivalent_alpha(n, beta_decrease) = aimd::equivalent_alpha;
    /// Decrease fraction equivalent to n flows for a given increase alpha.
    fn aimd_equivalent_beta_decrease(n, alpha) = aimd::equivalent_beta_decrease;
    /// Theorem 1 of Altman et al.; beta is the kept fraction.
    fn altman_utilization(n, beta_keep) = altman::utilization_one_per_event;
    /// Policy ALL of Altman et al.
    fn altman_synchronized_utilization(beta_keep) = altman::utilization_synchronized;
    /// MulTCP utilisation in the Altman et al. model.
    fn altman_multcp_utilization(n, beta_keep) = altman::utilization_multcp;
    /// Second moment of one connection's rate (normalised by c²) under the largest-rate policy.
    fn altman_largest_rate_second_moment(n, beta_keep) = altman::largest_rate_second_moment;
}

fn multfrc_options(form: &str, refine: bool) -> PyResult<multfrc::Options> {
    let form = multfrc::Form::from_name(form).ok_or_else(|| {
        PyValueError::new_err(format!("form must be 'draft' or 'ns2', got {form:?}"))
    })?;
    Ok(multfrc::Options { form, refine })
}

/// MulTFRC rate, bytes/s for s in bytes. `columns` = (n, p, j, rtt, s, t_rto, b).
#[pyfunction]
fn multfrc_rate<'py>(
    py: Python<'py>,
    columns: [Column<'py>; 7],
    form: &str,
    refine: bool,
) -> Output<'py> {
    let options = multfrc_options(form, refine)?;
    elementwise(py, columns, |[n, p, j, rtt, s, t_rto, b]| {
        let inputs = multfrc::Inputs {
            flows: n,
            loss_event_rate: p,
            packets_per_loss_event: j,
            rtt_s: rtt,
            segment_bytes: s,
            t_rto_s: t_rto,
            packets_per_ack: b,
        };
        multfrc::rate(&inputs, options)
    })
}

/// Number of emulated flows affected by a loss event of j packets.
#[pyfunction]
fn multfrc_affected_flows<'py>(
    py: Python<'py>,
    n: Column<'py>,
    j: Column<'py>,
    form: &str,
    refine: bool,
) -> Output<'py> {
    let options = multfrc_options(form, refine)?;
    elementwise(py, [n, j], |[n, j]| multfrc::affected_flows(n, j, options))
}

/// Proposition 1: sorted rates at the largest-rate fixed point.
#[pyfunction]
fn altman_largest_rate_fixed_point(
    py: Python<'_>,
    n: usize,
    beta_keep: f64,
    capacity: f64,
) -> Bound<'_, PyArray1<f64>> {
    altman::largest_rate_fixed_point(n, beta_keep, capacity).into_pyarray_bound(py)
}

/// §IV-B: sorted rates at tagging times under the beatdown policy.
#[pyfunction]
fn altman_beatdown_stationary_point(
    py: Python<'_>,
    n: usize,
    capacity: f64,
) -> Bound<'_, PyArray1<f64>> {
    altman::beatdown_stationary_point(n, capacity).into_pyarray_bound(py)
}

/// MPFAST per-path equilibrium rates (packets/s).
#[pyfunction]
fn mpfast_equilibrium_rates<'py>(
    py: Python<'py>,
    alpha: f64,
    queueing_delay: Column<'py>,
    weights: Column<'py>,
) -> Output<'py> {
    let columns = [queueing_delay, weights];
    let [q, theta] = equal_length(
        &columns,
        "queueing_delay and weights must have the same length",
    )?;
    Ok(mpfast::equilibrium_rates(alpha, q, theta).into_pyarray_bound(py))
}

/// MPFAST per-path equilibrium windows (packets).
#[pyfunction]
fn mpfast_equilibrium_windows<'py>(
    py: Python<'py>,
    alpha: f64,
    base_rtt: Column<'py>,
    queueing_delay: Column<'py>,
    weights: Column<'py>,
) -> Output<'py> {
    let columns = [base_rtt, queueing_delay, weights];
    let [d, q, theta] = equal_length(
        &columns,
        "base_rtt, queueing_delay and weights must have the same length",
    )?;
    Ok(mpfast::equilibrium_windows(alpha, d, q, theta).into_pyarray_bound(py))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pftk_full_rate, m)?)?;
    m.add_function(wrap_pyfunction!(pftk_approximate_rate, m)?)?;
    m.add_function(wrap_pyfunction!(pftk_square_root_rate, m)?)?;
    m.add_function(wrap_pyfunction!(tfrc_rate, m)?)?;
    m.add_function(wrap_pyfunction!(multfrc_rate, m)?)?;
    m.add_function(wrap_pyfunction!(multfrc_affected_flows, m)?)?;
    m.add_function(wrap_pyfunction!(aimd_rate, m)?)?;
    m.add_function(wrap_pyfunction!(aimd_mean_window, m)?)?;
    m.add_function(wrap_pyfunction!(aimd_equivalent_flows, m)?)?;
    m.add_function(wrap_pyfunction!(aimd_equivalent_alpha, m)?)?;
    m.add_function(wrap_pyfunction!(aimd_equivalent_beta_decrease, m)?)?;
    m.add_function(wrap_pyfunction!(altman_utilization, m)?)?;
    m.add_function(wrap_pyfunction!(altman_synchronized_utilization, m)?)?;
    m.add_function(wrap_pyfunction!(altman_multcp_utilization, m)?)?;
    m.add_function(wrap_pyfunction!(altman_largest_rate_second_moment, m)?)?;
    m.add_function(wrap_pyfunction!(altman_largest_rate_fixed_point, m)?)?;
    m.add_function(wrap_pyfunction!(altman_beatdown_stationary_point, m)?)?;
    m.add_function(wrap_pyfunction!(mpfast_equilibrium_rates, m)?)?;
    m.add_function(wrap_pyfunction!(mpfast_equilibrium_windows, m)?)?;
    Ok(())
}
